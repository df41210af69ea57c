#include <algorithm>
#include <cmath>

#include "cuda/check.cuh"
#include "cuda/element.cuh"
#include "cuda/optimizer_kernels.cuh"

namespace pacer::gpu {
namespace {

constexpr int kThreads = 256;

// Adam's bias corrections, computed once per step in float64 as the CPU back end does.
struct AdamScalars {
  AdamParams params;
  float inv_bias1;  // 1 / (1 - beta1^step)
  float inv_bias2;  // 1 / (1 - beta2^step)
};

// Each element of every array is read once and written once, in consecutive threads (coalesced).
template <typename Grad>
__global__ void __launch_bounds__(kThreads)
    SgdKernel(SgdParams p, float* weights, float* momentum, const Grad* grad, size_t count) {
  const size_t threads = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += threads) {
    const float w = weights[i];
    const float g = ToFloat(grad[i]) * p.grad_scale + w * p.weight_decay;
    float update = g;
    if (p.momentum != 0.f) {
      const float m = momentum[i] * p.momentum + g;
      momentum[i] = m;
      update = p.nesterov ? g + m * p.momentum : m;
    }
    weights[i] = w + update * -p.lr;
  }
}

template <typename Grad>
__global__ void __launch_bounds__(kThreads)
    AdamKernel(AdamScalars s, float* weights, float* m_state, float* v_state, const Grad* grad,
               size_t count) {
  const AdamParams& p = s.params;
  const size_t threads = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += threads) {
    const float w = weights[i];
    float g = ToFloat(grad[i]) * p.grad_scale;
    if (!p.decoupled_weight_decay) g = g + w * p.weight_decay;
    const float m = m_state[i] * p.beta1 + g * (1.f - p.beta1);
    const float v = v_state[i] * p.beta2 + g * g * (1.f - p.beta2);
    m_state[i] = m;
    v_state[i] = v;
    float update = m * s.inv_bias1 / (sqrtf(v * s.inv_bias2) + p.eps);
    if (p.decoupled_weight_decay) update = update + w * p.weight_decay;
    weights[i] = w + update * -p.lr;
  }
}

int Blocks(size_t count, int max_blocks) {
  return static_cast<int>(std::clamp<size_t>((count + kThreads - 1) / kThreads, 1, max_blocks));
}

}  // namespace

void LaunchSgd(const SgdParams& params, float* weights, float* momentum, ConstArray grad,
               size_t count, int max_blocks, cudaStream_t stream) {
  if (count == 0) return;
  WithElementType(grad.type, [&](auto tag) {
    using Grad = typename decltype(tag)::type;
    SgdKernel<<<Blocks(count, max_blocks), kThreads, 0, stream>>>(
        params, weights, momentum, static_cast<const Grad*>(grad.data), count);
  });
  CUDA_CHECK(cudaGetLastError());
}

void LaunchAdam(const AdamParams& params, float* weights, float* m, float* v, ConstArray grad,
                size_t count, int max_blocks, cudaStream_t stream) {
  if (count == 0) return;
  const double step = static_cast<double>(params.step);
  const AdamScalars scalars{params,
                            static_cast<float>(1.0 / (1.0 - std::pow(double{params.beta1}, step))),
                            static_cast<float>(1.0 / (1.0 - std::pow(double{params.beta2}, step)))};
  WithElementType(grad.type, [&](auto tag) {
    using Grad = typename decltype(tag)::type;
    AdamKernel<<<Blocks(count, max_blocks), kThreads, 0, stream>>>(
        scalars, weights, m, v, static_cast<const Grad*>(grad.data), count);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace pacer::gpu
