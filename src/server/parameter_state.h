#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/byte_stream.h"
#include "common/optimizer_spec.h"
#include "pacer/buffer.h"
#include "pacer/reducer.h"

namespace pacer {

// One key's parameters and optimizer state (momentum, Adam's moments and step count).
class ParameterState {
 public:
  // Recycled memory for values (see RequestShards::Allocate).
  using Allocator = std::function<Buffer(size_t bytes, uint8_t** writable)>;

  // `initial`: `count` floats, possibly unaligned.
  ParameterState(const void* initial, size_t count, const Allocator& allocate);

  // values = step(values, grad_scale * grad) at lr_scale x the spec's rate: one fused pass of the
  // Reducer. Values still read by a response in flight are never changed: the step then runs on a
  // fresh copy.
  void Apply(const OptimizerSpec& spec, Reducer& reducer, const float* grad, float grad_scale,
             const Allocator& allocate, float lr_scale = 1);

  // Everything, values and optimizer state, for a move to another server.
  void Encode(ByteWriter& out) const;
  // Throws Error if `in` holds no ParameterState.
  static std::unique_ptr<ParameterState> Decode(ByteReader& in, const Allocator& allocate);

  // The current values; the buffer may be sent as it is (zero-copy).
  const Buffer& values() const { return values_; }
  size_t size() const { return size_; }

 private:
  // Optimizer state in recycled memory too: a key that moves in arrives in pages already mapped.
  struct Moment {
    Buffer memory;
    float* data = nullptr;  // null until the optimizer needs it
    // Zeros, or `count` floats read from `bytes` (possibly unaligned).
    void Allocate(size_t count, const Allocator& allocate, const uint8_t* bytes = nullptr);
  };

  Buffer values_;
  float* data_;
  size_t size_;
  Moment momentum_;  // SGD with momentum; Adam's first moment
  Moment second_moment_;
  int64_t steps_ = 0;
};

}  // namespace pacer
