#include <algorithm>
#include <cstdint>

#include "cuda/check.cuh"
#include "cuda/element.cuh"
#include "cuda/sum_kernels.cuh"

// One fused pass rather than cuBLAS: a copy, N-1 Saxpy and an Sscal read and write the output
// N+1 times where the fused kernel writes it once, and with 16-bit arrays every Axpy would round
// the partial sum to 16 bits. `pacer-reduce-bench --device=cuda` prints the GB/s of both (and of a
// device copy, the ceiling); docs/PERFORMANCE.md records them.

namespace pacer::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // chunks per thread whose loads are in flight together

// The 16-byte path covers elements [head, head + chunks * kChunk), where every operand is 16-byte
// aligned; the elements before and after go one at a time.
struct SumPlan {
  SumArgs args;
  size_t head;
  size_t chunks;
};

// Inputs all of one type, known when compiling.
template <typename In>
struct UniformInputs {
  static __device__ float Load(const SumArgs& a, int k, size_t i) {
    return ToFloat(static_cast<const In*>(a.inputs[k])[i]);
  }
  static __device__ void LoadChunkAt(const SumArgs& a, int k, size_t i, float (&v)[kChunk]) {
    LoadChunk(static_cast<const In*>(a.inputs[k]) + i, v);
  }
};

// Inputs of mixed types: one switch per input, which every thread takes the same way.
struct MixedInputs {
  static __device__ float Load(const SumArgs& a, int k, size_t i) {
    switch (a.types[k]) {
      case DType::kF16:
        return UniformInputs<__half>::Load(a, k, i);
      case DType::kBF16:
        return UniformInputs<__nv_bfloat16>::Load(a, k, i);
      case DType::kF32:
        break;
    }
    return UniformInputs<float>::Load(a, k, i);
  }
  static __device__ void LoadChunkAt(const SumArgs& a, int k, size_t i, float (&v)[kChunk]) {
    switch (a.types[k]) {
      case DType::kF16:
        return UniformInputs<__half>::LoadChunkAt(a, k, i, v);
      case DType::kBF16:
        return UniformInputs<__nv_bfloat16>::LoadChunkAt(a, k, i, v);
      case DType::kF32:
        break;
    }
    UniformInputs<float>::LoadChunkAt(a, k, i, v);
  }
};

// Inputs are added in order 0..n-1 and the sum scaled last, as the CPU back end does, so both
// give the same bits. Grid-stride: any grid covers any count.
template <typename Out, typename Inputs>
__global__ void __launch_bounds__(kThreads) SumKernel(const __grid_constant__ SumPlan plan) {
  const SumArgs& a = plan.args;
  Out* out = static_cast<Out*>(a.out);
  const size_t thread = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const size_t threads = size_t{gridDim.x} * blockDim.x;

  for (size_t first = thread; first < plan.chunks; first += threads * kUnroll) {
    float acc[kUnroll][kChunk];
    for (int k = 0; k < a.n; ++k) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const size_t c = first + u * threads;
        if (c >= plan.chunks) break;
        float v[kChunk];
        Inputs::LoadChunkAt(a, k, plan.head + c * kChunk, v);
#pragma unroll
        for (int j = 0; j < kChunk; ++j) acc[u][j] = k == 0 ? v[j] : acc[u][j] + v[j];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t c = first + u * threads;
      if (c >= plan.chunks) break;
#pragma unroll
      for (int j = 0; j < kChunk; ++j) acc[u][j] *= a.scale;
      StoreChunk(out + plan.head + c * kChunk, acc[u]);
    }
  }

  const size_t middle = plan.chunks * kChunk;
  for (size_t r = thread; r < a.count - middle; r += threads) {
    const size_t i = r < plan.head ? r : r + middle;
    float acc = Inputs::Load(a, 0, i);
    for (int k = 1; k < a.n; ++k) acc += Inputs::Load(a, k, i);
    out[i] = FromFloat<Out>(acc * a.scale);
  }
}

bool IsAlignedAt(const void* p, DType type, size_t index) {
  return (reinterpret_cast<uintptr_t>(p) + index * SizeOf(type)) % 16 == 0;
}

// Finds the first element at which every operand is 16-byte aligned; without one (operands
// misaligned differently) every element takes the one-at-a-time path.
SumPlan Plan(const SumArgs& args) {
  for (size_t head = 0; head < kChunk && head <= args.count; ++head) {
    bool aligned = IsAlignedAt(args.out, args.out_type, head);
    for (int k = 0; k < args.n && aligned; ++k) {
      aligned = IsAlignedAt(args.inputs[k], args.types[k], head);
    }
    if (aligned) return {args, head, (args.count - head) / kChunk};
  }
  return {args, 0, 0};
}

bool InputsShareOneType(const SumArgs& args) {
  return std::all_of(args.types, args.types + args.n, [&](DType t) { return t == args.types[0]; });
}

}  // namespace

void LaunchSum(const SumArgs& args, int max_blocks, cudaStream_t stream) {
  if (args.count == 0) return;
  const SumPlan plan = Plan(args);
  const size_t work =
      std::max((plan.chunks + kUnroll - 1) / kUnroll, args.count - plan.chunks * kChunk);
  const int blocks =
      static_cast<int>(std::clamp<size_t>((work + kThreads - 1) / kThreads, 1, max_blocks));
  WithElementType(args.out_type, [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    if (!InputsShareOneType(args)) {
      SumKernel<Out, MixedInputs><<<blocks, kThreads, 0, stream>>>(plan);
      return;
    }
    WithElementType(args.types[0], [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      SumKernel<Out, UniformInputs<In>><<<blocks, kThreads, 0, stream>>>(plan);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace pacer::gpu
