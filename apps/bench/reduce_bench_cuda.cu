// The benchmark's own CUDA: the device's copy bandwidth and a sum made of cuBLAS calls, to set
// beside Pacer's fused kernel. It uses the CUDA runtime and cuBLAS alone, not Pacer's internals.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "pacer/error.h"
#include "reduce_bench_cuda.h"

namespace pacer::bench {
namespace {

void Check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw Error(std::string(call) + ": " + cudaGetErrorString(status));
  }
}

void Check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string(call) + ": " + cublasGetStatusString(status));
  }
}

void RequireDevice() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    cudaGetLastError();
    throw Error(std::string("no CUDA device for the benchmark: ") +
                (status != cudaSuccess ? cudaGetErrorString(status) : "device count is 0"));
  }
}

// What one measurement needs on the device, released at its end.
class Bench {
 public:
  Bench() {
    RequireDevice();
    Check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~Bench() {
    for (void* p : buffers_) cudaFree(p);
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    cudaStreamDestroy(stream_);
  }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() {
    if (cublas_ == nullptr) {
      Check(cublasCreate(&cublas_), "cublasCreate");
      Check(cublasSetStream(cublas_, stream_), "cublasSetStream");
    }
    return cublas_;
  }
  // `bytes` of device memory whose floats are all 0.747 (bytes of 0x3f: no zeros, no subnormals).
  float* Allocate(size_t bytes) {
    void* p = nullptr;
    Check(cudaMalloc(&p, bytes), "cudaMalloc");
    buffers_.push_back(p);
    Check(cudaMemsetAsync(p, 0x3f, bytes, stream_), "cudaMemsetAsync");
    return static_cast<float*>(p);
  }
  // Runs `op` once to warm up, then `reps` times between two events; the GB/s of moving
  // `bytes_per_rep` each time.
  template <typename Op>
  double TimedGBps(size_t bytes_per_rep, int reps, Op op) {
    op();
    cudaEvent_t start = nullptr, stop = nullptr;
    Check(cudaEventCreate(&start), "cudaEventCreate");
    Check(cudaEventCreate(&stop), "cudaEventCreate");
    Check(cudaEventRecord(start, stream_), "cudaEventRecord");
    for (int r = 0; r < reps; ++r) op();
    Check(cudaEventRecord(stop, stream_), "cudaEventRecord");
    Check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return static_cast<double>(bytes_per_rep) * reps / (ms * 1e-3) / 1e9;
  }

 private:
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::vector<void*> buffers_;
};

}  // namespace

double CudaDeviceCopyGBps(size_t bytes, int reps) {
  Bench bench;
  float* from = bench.Allocate(bytes);
  float* to = bench.Allocate(bytes);
  return bench.TimedGBps(2 * bytes, reps, [&] {
    Check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, bench.stream()),
          "cudaMemcpyAsync");
  });
}

// out = (in_0 + ... + in_{n-1}) / n with cuBLAS: a copy, n-1 Saxpy and an Sscal, so the output
// is written n+1 times.
double CudaCublasSumGBps(int inputs, size_t bytes_per_input, int reps) {
  Bench bench;
  std::vector<const float*> in;
  for (int k = 0; k < inputs; ++k) in.push_back(bench.Allocate(bytes_per_input));
  float* out = bench.Allocate(bytes_per_input);
  const auto count = static_cast<int64_t>(bytes_per_input / sizeof(float));
  const float one = 1.f, scale = 1.f / static_cast<float>(inputs);
  cublasHandle_t cublas = bench.cublas();
  Check(cublasSetPointerMode(cublas, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  return bench.TimedGBps((inputs + 1) * bytes_per_input, reps, [&] {
    Check(cudaMemcpyAsync(out, in[0], bytes_per_input, cudaMemcpyDeviceToDevice, bench.stream()),
          "cudaMemcpyAsync");
    for (int k = 1; k < inputs; ++k) {
      Check(cublasSaxpy_64(cublas, count, &one, in[k], 1, out, 1), "cublasSaxpy_64");
    }
    if (inputs > 1) Check(cublasSscal_64(cublas, count, &scale, out, 1), "cublasSscal_64");
  });
}

}  // namespace pacer::bench
