#pragma once

// Owners of CUDA memory, streams and events, released when they go out of scope.

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "cuda/check.cuh"

namespace pacer::gpu {

struct DeviceFree {
  void operator()(char* p) const { cudaFree(p); }
};
struct PinnedFree {
  void operator()(char* p) const { cudaFreeHost(p); }
};
struct StreamDestroy {
  void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};

using DeviceMemory = std::unique_ptr<char, DeviceFree>;
// Page-locked host memory: copies between it and the device run asynchronously at full speed.
using PinnedMemory = std::unique_ptr<char, PinnedFree>;
using Stream = std::unique_ptr<CUstream_st, StreamDestroy>;
using Event = std::unique_ptr<CUevent_st, EventDestroy>;

inline DeviceMemory AllocateDevice(size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  return DeviceMemory(static_cast<char*>(p));
}

inline PinnedMemory AllocatePinned(size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMallocHost(&p, bytes));
  return PinnedMemory(static_cast<char*>(p));
}

// Non-blocking: it does not wait for, or hold up, work on the legacy default stream.
inline Stream CreateStream() {
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}

inline Event CreateEvent(unsigned flags = cudaEventDisableTiming) {
  cudaEvent_t e = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
  return Event(e);
}

}  // namespace pacer::gpu
