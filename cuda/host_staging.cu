#include <algorithm>
#include <cstring>

#include "cuda/host_staging.cuh"

namespace pacer::gpu {
namespace {

// Bytes one slot moves per chunk, all staged operands together: large enough that a copy runs at
// full PCIe speed, small enough that the pipeline fills quickly.
constexpr size_t kSlotBytes = 8 << 20;

// Chunks hold a multiple of 256 elements, so staged arrays start 16-byte aligned within a slot and
// a chunk of a device operand starts as aligned as the operand itself.
constexpr size_t kChunkGranule = 256;

}  // namespace

HostStaging::HostStaging(cudaStream_t compute, int max_blocks)
    : compute_(compute), max_blocks_(max_blocks) {}

void HostStaging::Sum(const SumArgs& args, const HostMask& on_host) {
  if (args.count == 0) return;
  if (!slots_[0].host) {
    for (Slot& slot : slots_) {
      slot.host = AllocatePinned(kSlotBytes);
      slot.device = AllocateDevice(kSlotBytes);
    }
  }
  size_t staged_bytes_per_element = 0;
  for (int k = 0; k < args.n; ++k) {
    if (on_host[k]) staged_bytes_per_element += SizeOf(args.types[k]);
  }
  if (on_host[Reducer::kMaxInputs]) staged_bytes_per_element += SizeOf(args.out_type);
  Layout layout{
      args, on_host, kSlotBytes / staged_bytes_per_element / kChunkGranule * kChunkGranule, {}};
  size_t offset = 0;
  for (int k = 0; k < args.n; ++k) {
    layout.offset[k] = offset;
    if (on_host[k]) offset += layout.chunk * SizeOf(args.types[k]);
  }
  layout.offset[Reducer::kMaxInputs] = offset;

  // Chunk c is issued before chunk c-1 is finished, so the device always has the next one queued.
  const size_t chunks = (args.count + layout.chunk - 1) / layout.chunk;
  for (size_t c = 0; c <= chunks; ++c) {
    if (c < chunks) Issue(layout, c * layout.chunk, slots_[c % 2]);
    if (c > 0) Finish(layout, (c - 1) * layout.chunk, slots_[(c - 1) % 2]);
  }
}

// The slot is free: its previous chunk was finished (waited for) before this one is issued.
void HostStaging::Issue(const Layout& layout, size_t begin, Slot& slot) {
  const SumArgs& args = layout.args;
  SumArgs part = args;
  part.count = std::min(layout.chunk, args.count - begin);
  for (int k = 0; k < args.n; ++k) {
    const size_t size = SizeOf(args.types[k]);
    const char* source = static_cast<const char*>(args.inputs[k]) + begin * size;
    if (!layout.on_host[k]) {
      part.inputs[k] = source;
      continue;
    }
    char* pinned = slot.host.get() + layout.offset[k];
    char* device = slot.device.get() + layout.offset[k];
    std::memcpy(pinned, source, part.count * size);
    CUDA_CHECK(
        cudaMemcpyAsync(device, pinned, part.count * size, cudaMemcpyHostToDevice, copy_.get()));
    part.inputs[k] = device;
  }
  CUDA_CHECK(cudaEventRecord(slot.copied_in.get(), copy_.get()));
  CUDA_CHECK(cudaStreamWaitEvent(compute_, slot.copied_in.get(), 0));

  const size_t out_size = SizeOf(args.out_type);
  const size_t out_offset = layout.offset[Reducer::kMaxInputs];
  const bool out_on_host = layout.on_host[Reducer::kMaxInputs];
  part.out = out_on_host ? slot.device.get() + out_offset
                         : static_cast<char*>(args.out) + begin * out_size;
  LaunchSum(part, max_blocks_, compute_);
  if (out_on_host) {
    CUDA_CHECK(cudaMemcpyAsync(slot.host.get() + out_offset, part.out, part.count * out_size,
                               cudaMemcpyDeviceToHost, compute_));
  }
  CUDA_CHECK(cudaEventRecord(slot.done.get(), compute_));
}

// Waits for the slot's chunk and moves a host output from the page-locked buffer into place.
void HostStaging::Finish(const Layout& layout, size_t begin, Slot& slot) {
  CUDA_CHECK(cudaEventSynchronize(slot.done.get()));
  if (!layout.on_host[Reducer::kMaxInputs]) return;
  const size_t out_size = SizeOf(layout.args.out_type);
  const size_t len = std::min(layout.chunk, layout.args.count - begin);
  std::memcpy(static_cast<char*>(layout.args.out) + begin * out_size,
              slot.host.get() + layout.offset[Reducer::kMaxInputs], len * out_size);
}

}  // namespace pacer::gpu
