#pragma once

#include <cuda_runtime.h>

#include "pacer/reducer.h"

namespace pacer::gpu {

// One fused sum, out = scale * (inputs[0] + ... + inputs[n-1]), passed to the kernel by value.
// Every pointer is device memory; input 0 may be the output.
struct SumArgs {
  const void* inputs[Reducer::kMaxInputs];
  DType types[Reducer::kMaxInputs];
  int n;
  void* out;
  DType out_type;
  float scale;
  size_t count;
};

// Enqueues the sum on `stream` as one kernel launch of at most max_blocks blocks.
void LaunchSum(const SumArgs& args, int max_blocks, cudaStream_t stream);

}  // namespace pacer::gpu
