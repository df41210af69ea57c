#pragma once

#include <cstddef>

#include "pacer/buffer.h"
#include "pacer/types.h"
#include "server/key_state.h"
#include "server/parameter_state.h"

namespace pacer {

// A key's state as a record and back (SyncEngine's Export and Import, Checkpoint and Resume): its
// whole state (values, optimizer state, clocks, partial sums, held gradients) for a move to
// another server, or what resumes it (version, completed clock, values, optimizer state) for a
// checkpoint. Decoding checks every field against the job and throws Error naming the key for a
// malformed record; nothing else changes.
class KeyStateCodec {
 public:
  // `num_workers`: the job's; `allocate`: where records and decoded values go.
  KeyStateCodec(int num_workers, ParameterState::Allocator allocate)
      : num_workers_(num_workers), allocate_(std::move(allocate)) {}

  Buffer Encode(const KeyState& k) const;
  // A record Encode made on an engine of the same job with at most `switches` mode switches. The
  // state comes without waiting pulls.
  KeyState Decode(Key key, const Buffer& record, size_t switches) const;

  Buffer EncodeCheckpoint(const KeyState& k) const;
  // A checkpoint's version, completed clock and parameter state, into `k`.
  void DecodeCheckpoint(Key key, const Buffer& record, KeyState* k) const;

 private:
  const int num_workers_;
  const ParameterState::Allocator allocate_;
};

}  // namespace pacer
