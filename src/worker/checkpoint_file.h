#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pacer/types.h"

namespace pacer {

// What GradientSync::Checkpoint writes: the clock every worker resumes at, the optimizer the
// state belongs to, the tensors it covers (names and sizes, in registration order) and each key's
// record (SyncEngine::Checkpoint: values, optimizer state, version). One binary file, in the byte
// order of the machine that wrote it.
struct CheckpointFile {
  int64_t clock = 0;
  std::string optimizer;  // as --optimizer spells it
  std::vector<std::pair<std::string, uint64_t>> tensors;
  std::vector<std::pair<Key, std::vector<uint8_t>>> records;

  // Writes `path` through a temporary file renamed into place, so a job killed while writing
  // leaves the previous checkpoint whole. Throws Error naming the path.
  void Write(const std::string& path) const;
  // Throws Error naming the path for a missing, truncated or foreign file.
  static CheckpointFile Read(const std::string& path);
  // The file's bytes, already read; `what` names them in errors.
  static CheckpointFile Decode(const uint8_t* data, size_t size, const std::string& what);
};

}  // namespace pacer
