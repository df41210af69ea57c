#pragma once

// The CPU kernels, written once over the lane policies of simd_vec.h and instantiated by each
// instruction-set translation unit (kernels_portable.cc, kernels_avx2.cc, kernels_avx512.cc),
// which defines PACER_SIMD_ISA, PACER_KERNEL_NAMESPACE, PACER_KERNEL_TABLE and PACER_KERNEL_ISA
// first. Each element is read once per input and written once; tails take the one-lane policy
// with the same order of operations, so a result does not depend on where a thread's range starts.

#include <cstdint>
#include <type_traits>

#include "ps/reduce/kernel_table.h"
#include "ps/reduce/simd_vec.h"

namespace pacer::PACER_KERNEL_NAMESPACE {

// Vectors per input per step: one 64-byte line of the widest operand (fp32: one zmm or two ymm;
// all 16-bit: twice that). Past the cache, more lines per input and step starve the other streams
// (loads of one stream in flight hold up the rest), and 16-bit sums stepping half a line waste
// the fetch of the other half.
constexpr size_t kUnrollF32 = 64 / (Wide::kLanes * sizeof(float));

// Inputs whose types are known only at run time: one switch per input per step, taken the same
// way every time.
struct MixedInputs {
  const reduce::SumJob& job;

  int count() const { return job.inputs; }
  // acc[u] (= or +=) input j at [i + u * lanes].
  template <class L, size_t kU, bool kFirst>
  void Accumulate(typename L::V* acc, int j, size_t i) const {
    auto add = [&](const auto* p) { AddInto<L, kU, kFirst>(acc, p, i); };
    switch (job.in_type[j]) {
      case DType::kF32:
        add(static_cast<const float*>(job.in[j]));
        break;
      case DType::kF16:
        add(static_cast<const F16*>(job.in[j]));
        break;
      default:  // DType::kBF16; a default lets the compiler see acc always written
        add(static_cast<const BF16*>(job.in[j]));
        break;
    }
  }

  template <class L, size_t kU, bool kFirst, class In>
  static void AddInto(typename L::V* acc, const In* p, size_t i) {
    for (size_t u = 0; u < kU; ++u) {
      const typename L::V x = L::Load(p + i + u * L::kLanes);
      acc[u] = kFirst ? x : L::Add(acc[u], x);
    }
  }
};

// Inputs all of one type (the common case): typed pointers, no switch. In cache, with 8 inputs,
// the switch per input per step cost a third of the time.
template <class In>
struct UniformInputs {
  const In* in[Reducer::kMaxInputs];
  int n;

  explicit UniformInputs(const reduce::SumJob& job) : n(job.inputs) {
    for (int j = 0; j < n; ++j) in[j] = static_cast<const In*>(job.in[j]);
  }
  int count() const { return n; }
  template <class L, size_t kU, bool kFirst>
  void Accumulate(typename L::V* acc, int j, size_t i) const {
    MixedInputs::AddInto<L, kU, kFirst>(acc, in[j], i);
  }
};

template <class L, size_t kU, bool kStream, class Inputs, class Out>
inline void SumAt(const Inputs& inputs, Out* out, typename L::V scale, size_t i) {
  typename L::V acc[kU];
  inputs.template Accumulate<L, kU, true>(acc, 0, i);
  for (int j = 1; j < inputs.count(); ++j) inputs.template Accumulate<L, kU, false>(acc, j, i);
  for (size_t u = 0; u < kU; ++u) {
    L::template Store<kStream>(out + i + u * L::kLanes, L::Mul(acc[u], scale));
  }
}

template <class Out, bool kStream, size_t kUnroll, class Inputs>
void SumKernel(const reduce::SumJob& job, const Inputs& inputs, size_t begin, size_t end) {
  Out* out = static_cast<Out*>(job.out);
  size_t i = begin;
  if constexpr (kStream) {  // non-temporal stores need a 64-byte-aligned destination
    for (; i < end && reinterpret_cast<uintptr_t>(out + i) % 64 != 0; ++i) {
      SumAt<Narrow, 1, false>(inputs, out, job.scale, i);
    }
  }
  constexpr size_t kStep = kUnroll * Wide::kLanes;
  const typename Wide::V scale = Wide::Set1(job.scale);
  for (; i + kStep <= end; i += kStep) SumAt<Wide, kUnroll, kStream>(inputs, out, scale, i);
  for (; i < end; ++i) SumAt<Narrow, 1, false>(inputs, out, job.scale, i);
  if constexpr (kStream) _mm_sfence();  // order the streamed lines before the caller reads them
}

// Calls body(static_cast<T*>(nullptr)) with T the element type of `type`.
template <class Body>
inline void WithElementType(DType type, Body&& body) {
  switch (type) {
    case DType::kF32:
      body(static_cast<float*>(nullptr));
      break;
    case DType::kF16:
      body(static_cast<F16*>(nullptr));
      break;
    case DType::kBF16:
      body(static_cast<BF16*>(nullptr));
      break;
  }
}

void Sum(const reduce::SumJob& job, size_t begin, size_t end) {
  bool all_half = job.out_type != DType::kF32, uniform = true;
  for (int j = 0; j < job.inputs; ++j) {
    all_half &= job.in_type[j] != DType::kF32;
    uniform &= job.in_type[j] == job.in_type[0];
  }
  auto run = [&](const auto& inputs) {
    WithElementType(job.out_type, [&](auto* out_type) {
      using Out = std::remove_pointer_t<decltype(out_type)>;
      if (job.stream_out) {
        all_half ? SumKernel<Out, true, 2 * kUnrollF32>(job, inputs, begin, end)
                 : SumKernel<Out, true, kUnrollF32>(job, inputs, begin, end);
      } else {
        all_half ? SumKernel<Out, false, 2 * kUnrollF32>(job, inputs, begin, end)
                 : SumKernel<Out, false, kUnrollF32>(job, inputs, begin, end);
      }
    });
  };
  if (!uniform) {
    run(MixedInputs{job});
    return;
  }
  WithElementType(job.in_type[0], [&](auto* in_type) {
    run(UniformInputs<std::remove_const_t<std::remove_pointer_t<decltype(in_type)>>>(job));
  });
}

// Calls body(static_cast<const G*>(grad)) with G the gradient's element type.
template <class Body>
inline void WithGradType(const ConstArray& grad, Body&& body) {
  WithElementType(grad.type, [&](auto* type) {
    body(static_cast<const std::remove_pointer_t<decltype(type)>*>(grad.data));
  });
}

// Runs step(L, i) over [begin, end): wide blocks, then one-lane tails.
template <class Step>
inline void ForEachLane(size_t begin, size_t end, Step&& step) {
  size_t i = begin;
  for (; i + Wide::kLanes <= end; i += Wide::kLanes) step(Wide{}, i);
  for (; i < end; ++i) step(Narrow{}, i);
}

template <bool kMomentum, bool kNesterov, class G>
void SgdKernel(const reduce::SgdJob& job, const G* grad, size_t begin, size_t end) {
  const SgdParams& p = job.params;
  ForEachLane(begin, end, [&](auto lanes, size_t i) {
    using L = decltype(lanes);
    const typename L::V w = L::Load(job.weights + i);
    const typename L::V g = L::Add(L::Mul(L::Load(grad + i), L::Set1(p.grad_scale)),
                                   L::Mul(w, L::Set1(p.weight_decay)));
    typename L::V update = g;
    if constexpr (kMomentum) {
      const typename L::V m = L::Add(L::Mul(L::Load(job.momentum + i), L::Set1(p.momentum)), g);
      L::template Store<false>(job.momentum + i, m);
      update = kNesterov ? L::Add(g, L::Mul(m, L::Set1(p.momentum))) : m;
    }
    L::template Store<false>(job.weights + i, L::Add(w, L::Mul(update, L::Set1(-p.lr))));
  });
}

void Sgd(const reduce::SgdJob& job, size_t begin, size_t end) {
  WithGradType(job.grad, [&](const auto* grad) {
    if (job.params.momentum == 0.f) {
      SgdKernel<false, false>(job, grad, begin, end);
    } else if (job.params.nesterov) {
      SgdKernel<true, true>(job, grad, begin, end);
    } else {
      SgdKernel<true, false>(job, grad, begin, end);
    }
  });
}

template <bool kDecoupled, class G>
void AdamKernel(const reduce::AdamJob& job, const G* grad, size_t begin, size_t end) {
  const AdamParams& p = job.params;
  ForEachLane(begin, end, [&](auto lanes, size_t i) {
    using L = decltype(lanes);
    const typename L::V w = L::Load(job.weights + i);
    typename L::V g = L::Mul(L::Load(grad + i), L::Set1(p.grad_scale));
    if constexpr (!kDecoupled) g = L::Add(g, L::Mul(w, L::Set1(p.weight_decay)));
    const typename L::V m =
        L::Add(L::Mul(L::Load(job.m + i), L::Set1(p.beta1)), L::Mul(g, L::Set1(1.f - p.beta1)));
    const typename L::V v = L::Add(L::Mul(L::Load(job.v + i), L::Set1(p.beta2)),
                                   L::Mul(L::Mul(g, g), L::Set1(1.f - p.beta2)));
    L::template Store<false>(job.m + i, m);
    L::template Store<false>(job.v + i, v);
    const typename L::V denom = L::Add(L::Sqrt(L::Mul(v, L::Set1(job.inv_bias2))), L::Set1(p.eps));
    typename L::V update = L::Div(L::Mul(m, L::Set1(job.inv_bias1)), denom);
    if constexpr (kDecoupled) update = L::Add(update, L::Mul(w, L::Set1(p.weight_decay)));
    L::template Store<false>(job.weights + i, L::Add(w, L::Mul(update, L::Set1(-p.lr))));
  });
}

void Adam(const reduce::AdamJob& job, size_t begin, size_t end) {
  WithGradType(job.grad, [&](const auto* grad) {
    if (job.params.decoupled_weight_decay) {
      AdamKernel<true>(job, grad, begin, end);
    } else {
      AdamKernel<false>(job, grad, begin, end);
    }
  });
}

}  // namespace pacer::PACER_KERNEL_NAMESPACE

namespace pacer::reduce {

const KernelTable& PACER_KERNEL_TABLE() {
  static const KernelTable table{PACER_KERNEL_ISA, &PACER_KERNEL_NAMESPACE::Sum,
                                 &PACER_KERNEL_NAMESPACE::Sgd, &PACER_KERNEL_NAMESPACE::Adam};
  return table;
}

}  // namespace pacer::reduce
