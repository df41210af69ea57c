#pragma once

#include <cuda_runtime.h>

#include "pacer/reducer.h"

namespace pacer::gpu {

// Enqueue one fused optimizer step on `stream`, formulas as in pacer/reducer.h. Weights and state
// are fp32 device memory, the gradient device memory of any type; momentum may be null only when
// params.momentum == 0. The arithmetic is the CPU back end's, operation for operation.
void LaunchSgd(const SgdParams& params, float* weights, float* momentum, ConstArray grad,
               size_t count, int max_blocks, cudaStream_t stream);
void LaunchAdam(const AdamParams& params, float* weights, float* m, float* v, ConstArray grad,
                size_t count, int max_blocks, cudaStream_t stream);

}  // namespace pacer::gpu
