#pragma once

// The sum done with cuBLAS calls, for the benchmark to compare with the fused kernel
// (sum_kernels.cu), which the reducer uses.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

namespace pacer::gpu {

struct CublasDestroy {
  void operator()(cublasHandle_t handle) const { cublasDestroy(handle); }
};
using CublasHandle = std::unique_ptr<cublasContext, CublasDestroy>;

// Throws pacer::Error where cuBLAS cannot start.
CublasHandle CreateCublasHandle();

// out = scale * (inputs[0] + ... + inputs[n-1]) over fp32 device arrays, enqueued on `stream`:
// a copy, n-1 Saxpy and an Sscal, so the output is written n+1 times.
void CublasSumF32(cublasHandle_t handle, const float* const* inputs, int n, float* out,
                  size_t count, float scale, cudaStream_t stream);

}  // namespace pacer::gpu
