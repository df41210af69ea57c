#include <string>

#include "cuda/check.cuh"
#include "cuda/cublas_sum.cuh"
#include "pacer/error.h"

namespace pacer::gpu {
namespace {

void CheckCublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string(call) + ": " + cublasGetStatusName(status) + " (" +
                cublasGetStatusString(status) + ")");
  }
}

}  // namespace

CublasHandle CreateCublasHandle() {
  cublasHandle_t handle = nullptr;
  CheckCublas(cublasCreate(&handle), "cublasCreate");
  return CublasHandle(handle);
}

void CublasSumF32(cublasHandle_t handle, const float* const* inputs, int n, float* out,
                  size_t count, float scale, cudaStream_t stream) {
  CheckCublas(cublasSetStream(handle, stream), "cublasSetStream");
  CheckCublas(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  if (inputs[0] != out) {
    CUDA_CHECK(
        cudaMemcpyAsync(out, inputs[0], count * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  }
  const auto elements = static_cast<int64_t>(count);
  const float one = 1.f;
  for (int k = 1; k < n; ++k) {
    CheckCublas(cublasSaxpy_64(handle, elements, &one, inputs[k], 1, out, 1), "cublasSaxpy_64");
  }
  if (scale != 1.f) CheckCublas(cublasSscal_64(handle, elements, &scale, out, 1), "cublasSscal_64");
}

}  // namespace pacer::gpu
