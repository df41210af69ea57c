// A checkpoint file (GradientSync::Checkpoint's), as a resuming job reads it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "pacer/error.h"
#include "worker/checkpoint_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/pacer-checkpoint-fuzz-" + std::to_string(getpid());
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  try {
    pacer::CheckpointFile::Read(path);
  } catch (const pacer::Error&) {
  }
  return 0;
}
