#pragma once

#include <cuda_runtime.h>

#include <array>

#include "cuda/cuda_resources.cuh"
#include "cuda/sum_kernels.cuh"

namespace pacer::gpu {

// Sums whose operands are partly or wholly in host memory, piped through page-locked buffers in
// chunks over two slots: while the kernel and the copy back of one chunk run on the compute
// stream, the next chunk is copied in on the copy stream and the host copies the chunk before
// into place. The buffers are allocated at first use and kept.
class HostStaging {
 public:
  // Whether input k is in host memory; [kMaxInputs] is the output.
  using HostMask = std::array<bool, Reducer::kMaxInputs + 1>;

  HostStaging(cudaStream_t compute, int max_blocks);

  // At least one operand is on the host. Returns when the whole output is written, wherever it
  // lives.
  void Sum(const SumArgs& args, const HostMask& on_host);

 private:
  struct Slot {
    PinnedMemory host;
    DeviceMemory device;
    Event copied_in = CreateEvent();  // the chunk's inputs are on the device
    Event done = CreateEvent();       // the chunk is summed and, for a host output, copied back
  };

  // Where one call's staged operands lie in a slot, and how many elements a chunk has.
  struct Layout {
    const SumArgs& args;
    const HostMask& on_host;
    size_t chunk;
    std::array<size_t, Reducer::kMaxInputs + 1> offset;  // bytes; [kMaxInputs] is the output
  };

  void Issue(const Layout& layout, size_t begin, Slot& slot);
  void Finish(const Layout& layout, size_t begin, Slot& slot);

  cudaStream_t compute_;
  Stream copy_ = CreateStream();
  int max_blocks_;
  std::array<Slot, 2> slots_;
};

}  // namespace pacer::gpu
