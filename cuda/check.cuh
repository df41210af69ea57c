#pragma once

#include <cuda_runtime.h>

#include <string>

#include "pacer/error.h"

namespace pacer::gpu {

// Throws pacer::Error naming the failed call, where it was made and CUDA's reason.
[[noreturn]] inline void ThrowCudaError(cudaError_t status, const char* call, const char* file,
                                        int line) {
  cudaGetLastError();  // clear a non-sticky error so the next launch check does not report it
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
              cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

}  // namespace pacer::gpu

#define CUDA_CHECK(call)                                                          \
  do {                                                                            \
    const cudaError_t pacer_cuda_status = (call);                                 \
    if (pacer_cuda_status != cudaSuccess) {                                       \
      ::pacer::gpu::ThrowCudaError(pacer_cuda_status, #call, __FILE__, __LINE__); \
    }                                                                             \
  } while (0)
