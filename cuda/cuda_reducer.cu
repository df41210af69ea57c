#include <cuda_runtime.h>

#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>

#include "cuda/check.cuh"
#include "cuda/cuda_reducer.h"
#include "cuda/cuda_resources.cuh"
#include "cuda/host_staging.cuh"
#include "cuda/optimizer_kernels.cuh"
#include "cuda/sum_kernels.cuh"
#include "pacer/error.h"
#include "ps/reduce/operand_checks.h"

namespace pacer {
namespace {

constexpr int kThreadsPerBlock = 256;  // the kernels' block size

// Pageable and page-locked host memory: copied through staging buffers. Device and managed
// memory: read in place. A pointer CUDA does not know is pageable host memory.
bool IsHostMemory(const void* p) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return attributes.type == cudaMemoryTypeUnregistered || attributes.type == cudaMemoryTypeHost;
}

// Optimizer operands must be device memory: a kernel touching host memory would fault and leave
// the whole CUDA context unusable.
void CheckDeviceMemory(const char* op, size_t count,
                       std::initializer_list<std::pair<const char*, const void*>> operands) {
  if (count == 0) return;
  for (const auto& [name, p] : operands) {
    if (p != nullptr && IsHostMemory(p)) {
      throw Error(std::string(op) + " step: " + name +
                  " is host memory; the CUDA reducer's optimizer steps take device memory "
                  "(Reducer::Allocate)" +
                  reduce::CountText(count));
    }
  }
}

// Makes the reducer's device current for one call and the caller's again afterwards. A failure
// here shows in the next CUDA call, which is checked.
class DeviceScope {
 public:
  explicit DeviceScope(int device) : device_(device) {
    cudaGetDevice(&previous_);
    if (previous_ != device_) cudaSetDevice(device_);
  }
  ~DeviceScope() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int device_;
  int previous_ = -1;
};

class CudaReducer final : public Reducer {
 public:
  explicit CudaReducer(int device) : device_(device) {
    DeviceScope scope(device_);
    cudaDeviceProp properties;
    CUDA_CHECK(cudaGetDeviceProperties(&properties, device_));
    description_ = std::string("cuda ") + properties.name + " sm_" +
                   std::to_string(properties.major * 10 + properties.minor);
    max_blocks_ = properties.multiProcessorCount *
                  (properties.maxThreadsPerMultiProcessor / kThreadsPerBlock);
    stream_ = gpu::CreateStream();
    staging_ = std::make_unique<gpu::HostStaging>(stream_.get(), max_blocks_);
  }

  ~CudaReducer() override {
    DeviceScope scope(device_);
    staging_.reset();
    stream_.reset();
  }

  Device device() const override { return Device::kCuda; }
  std::string Describe() const override { return description_; }

  void Sum(Span<const ConstArray> inputs, MutableArray out, size_t count, float scale) override {
    reduce::CheckSumOperands(inputs, out, count);
    if (count == 0) return;
    DeviceScope scope(device_);
    gpu::SumArgs args{};
    args.n = static_cast<int>(inputs.size());
    args.out = out.data;
    args.out_type = out.type;
    args.scale = scale;
    args.count = count;
    gpu::HostStaging::HostMask on_host{};
    on_host[kMaxInputs] = IsHostMemory(out.data);
    bool any_on_host = on_host[kMaxInputs];
    for (int k = 0; k < args.n; ++k) {
      args.inputs[k] = inputs[k].data;
      args.types[k] = inputs[k].type;
      on_host[k] = IsHostMemory(inputs[k].data);
      any_on_host = any_on_host || on_host[k];
    }
    if (!any_on_host) {
      gpu::LaunchSum(args, max_blocks_, stream_.get());
      return;
    }
    std::lock_guard<std::mutex> lock(staging_mutex_);
    staging_->Sum(args, on_host);
  }

  void Cast(ConstArray in, MutableArray out, size_t count) override {
    Sum(Span<const ConstArray>(&in, 1), out, count, 1.f);  // times one is exact
  }

  void SgdStep(const SgdParams& params, float* weights, float* momentum_buf, ConstArray grad,
               size_t count) override {
    reduce::CheckSgdOperands(params, weights, momentum_buf, grad, count);
    CheckDeviceMemory(
        "SGD", count,
        {{"weights", weights}, {"gradient", grad.data}, {"momentum buffer", momentum_buf}});
    DeviceScope scope(device_);
    gpu::LaunchSgd(params, weights, momentum_buf, grad, count, max_blocks_, stream_.get());
  }

  void AdamStep(const AdamParams& params, float* weights, float* m, float* v, ConstArray grad,
                size_t count) override {
    reduce::CheckAdamOperands(params, weights, m, v, grad, count);
    CheckDeviceMemory("Adam", count,
                      {{"weights", weights},
                       {"gradient", grad.data},
                       {"first moment m", m},
                       {"second moment v", v}});
    DeviceScope scope(device_);
    gpu::LaunchAdam(params, weights, m, v, grad, count, max_blocks_, stream_.get());
  }

  void* Allocate(size_t bytes) override {
    DeviceScope scope(device_);
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw Error("CUDA reducer: cannot allocate " + std::to_string(bytes) + " B on device " +
                  std::to_string(device_) + ": " + cudaGetErrorString(status));
    }
    return p;
  }

  void Free(void* p) override {
    DeviceScope scope(device_);
    CUDA_CHECK(cudaFree(p));
  }

  // Synchronous, so the host buffer may be reused (CopyIn) or read (CopyOut) on return.
  void CopyIn(void* dst, const void* host_src, size_t bytes) override {
    Copy(dst, host_src, bytes);
  }
  void CopyOut(void* host_dst, const void* src, size_t bytes) override {
    Copy(host_dst, src, bytes);
  }

  void Synchronize() override {
    DeviceScope scope(device_);
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

 private:
  // In stream order, after the operations issued before it.
  void Copy(void* dst, const void* src, size_t bytes) {
    DeviceScope scope(device_);
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  int device_;
  std::string description_;
  int max_blocks_ = 0;
  gpu::Stream stream_;
  std::mutex staging_mutex_;  // Sum may be called from several threads; the staging buffers are one
  std::unique_ptr<gpu::HostStaging> staging_;
};

}  // namespace

std::unique_ptr<Reducer> MakeCudaReducer(std::string* why_not) {
  auto fail = [why_not](std::string why) -> std::unique_ptr<Reducer> {
    if (why_not != nullptr) *why_not = std::move(why);
    return nullptr;
  };
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return fail(std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status));
  }
  if (devices == 0) return fail("cudaGetDeviceCount: no CUDA device");
  try {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    return std::make_unique<CudaReducer>(device);
  } catch (const Error& e) {
    return fail(e.what());
  }
}

}  // namespace pacer
