#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "cuda/check.cuh"
#include "cuda/cublas_sum.cuh"
#include "cuda/cuda_resources.cuh"
#include "pacer/error.h"
#include "reduce_bench_cuda.h"

namespace pacer::bench {
namespace {

void RequireDevice() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    cudaGetLastError();
    throw Error(std::string("no CUDA device for the benchmark: ") +
                (status != cudaSuccess ? cudaGetErrorString(status) : "device count is 0"));
  }
}

// Runs `op` once to warm up, then `reps` times between two events; returns the GB/s of moving
// `bytes_per_rep` each time.
template <typename Op>
double TimedGBps(cudaStream_t stream, size_t bytes_per_rep, int reps, Op op) {
  op();
  const gpu::Event start = gpu::CreateEvent(cudaEventDefault);
  const gpu::Event stop = gpu::CreateEvent(cudaEventDefault);
  CUDA_CHECK(cudaEventRecord(start.get(), stream));
  for (int r = 0; r < reps; ++r) op();
  CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(bytes_per_rep) * reps / (ms * 1e-3) / 1e9;
}

}  // namespace

double CudaDeviceCopyGBps(size_t bytes, int reps) {
  RequireDevice();
  const gpu::Stream stream = gpu::CreateStream();
  const gpu::DeviceMemory from = gpu::AllocateDevice(bytes), to = gpu::AllocateDevice(bytes);
  return TimedGBps(stream.get(), 2 * bytes, reps, [&] {
    CUDA_CHECK(
        cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
  });
}

double CudaCublasSumGBps(int inputs, size_t bytes_per_input, int reps) {
  RequireDevice();
  const gpu::Stream stream = gpu::CreateStream();
  const gpu::CublasHandle cublas = gpu::CreateCublasHandle();
  std::vector<gpu::DeviceMemory> buffers;
  std::vector<const float*> pointers;
  for (int k = 0; k < inputs; ++k) {
    buffers.push_back(gpu::AllocateDevice(bytes_per_input));
    // Bytes of 0x3f make every float 0.747: no zeros, no subnormals to slow anything down.
    CUDA_CHECK(cudaMemsetAsync(buffers.back().get(), 0x3f, bytes_per_input, stream.get()));
    pointers.push_back(reinterpret_cast<const float*>(buffers.back().get()));
  }
  const gpu::DeviceMemory out = gpu::AllocateDevice(bytes_per_input);
  const size_t count = bytes_per_input / sizeof(float);
  return TimedGBps(stream.get(), (inputs + 1) * bytes_per_input, reps, [&] {
    gpu::CublasSumF32(cublas.get(), pointers.data(), inputs, reinterpret_cast<float*>(out.get()),
                      count, 1.f / inputs, stream.get());
  });
}

}  // namespace pacer::bench
