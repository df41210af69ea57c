// Optimizer steps and operand checks of every Reducer back end (see reducer_conformance.h).

#include <algorithm>
#include <cmath>
#include <cstring>

#include "pacer/error.h"
#include "reducer_conformance.h"
#include "reducer_reference.h"

namespace pacer::testing {
namespace {

constexpr DType kTypes[] = {DType::kF32, DType::kF16, DType::kBF16};

std::vector<float> RandomFloats(std::mt19937_64& rng, size_t count, bool positive) {
  const HostArray a = RandomArray(rng, DType::kF32, count);
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(positive ? std::abs(a.Get(i)) : a.Get(i));
  return v;
}

// Device copies of float state, read back after a step.
struct FloatState {
  FloatState(Reducer& r, const std::vector<float>& init) : array(r, DType::kF32, init.size(), 1) {
    HostArray host(DType::kF32, init.size());
    std::memcpy(host.bytes.data(), init.data(), host.bytes.size());
    array.Upload(host);
  }
  float* data() { return static_cast<float*>(array.data()); }
  std::vector<float> Read() const {
    const HostArray host = array.Download();
    std::vector<float> v(host.count());
    std::memcpy(v.data(), host.bytes.data(), host.bytes.size());
    return v;
  }
  DeviceArray array;
};

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= 1e-6 * std::max(1.f, std::abs(want[i]))) && ++bad <= 3) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", scalar reference " << want[i];
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

TEST_P(ReducerConformance, SgdStepsMatchScalarReference) {
  std::mt19937_64 rng(FreshSeed());
  for (DType grad_type : kTypes) {
    for (int variant = 0; variant < 3; ++variant) {  // plain, momentum, Nesterov
      for (size_t count : {size_t{1031}, size_t{300007}}) {
        SgdParams p;
        p.lr = 0.05f;
        p.momentum = variant == 0 ? 0.f : 0.9f;
        p.nesterov = variant == 2;
        p.weight_decay = 1e-2f;
        p.grad_scale = 0.25f;
        SCOPED_TRACE(std::string("grad ") + NameOf(grad_type) + ", variant " +
                     std::to_string(variant) + ", " + std::to_string(count) + " elements");
        std::vector<float> w = RandomFloats(rng, count, false), m = RandomFloats(rng, count, false);
        const HostArray g = RandomArray(rng, grad_type, count);
        FloatState dw(*reducer_, w), dm(*reducer_, m);
        DeviceArray dg(*reducer_, grad_type, count, 1);
        dg.Upload(g);
        reducer_->SgdStep(p, dw.data(), variant == 0 ? nullptr : dm.data(), dg.as_input(), count);
        for (size_t i = 0; i < count; ++i) {
          const float grad = p.grad_scale * static_cast<float>(g.Get(i)) + p.weight_decay * w[i];
          float update = grad;
          if (variant != 0) {
            m[i] = p.momentum * m[i] + grad;
            update = p.nesterov ? grad + p.momentum * m[i] : m[i];
          }
          w[i] = w[i] - p.lr * update;
        }
        ExpectClose(dw.Read(), w, "weights");
        if (variant != 0) ExpectClose(dm.Read(), m, "momentum");
      }
    }
  }
}

TEST_P(ReducerConformance, AdamStepsMatchScalarReference) {
  std::mt19937_64 rng(FreshSeed());
  for (DType grad_type : kTypes) {
    for (bool decoupled : {false, true}) {
      for (size_t count : {size_t{1031}, size_t{300007}}) {
        AdamParams p;
        p.lr = 1e-2f;
        p.weight_decay = 0.1f;
        p.decoupled_weight_decay = decoupled;
        p.step = 7;
        p.grad_scale = 0.5f;
        SCOPED_TRACE(std::string("grad ") + NameOf(grad_type) + (decoupled ? ", AdamW" : ", Adam") +
                     ", " + std::to_string(count) + " elements");
        std::vector<float> w = RandomFloats(rng, count, false), m = RandomFloats(rng, count, false),
                           v = RandomFloats(rng, count, true);
        const HostArray g = RandomArray(rng, grad_type, count);
        FloatState dw(*reducer_, w), dm(*reducer_, m), dv(*reducer_, v);
        DeviceArray dg(*reducer_, grad_type, count, 1);
        dg.Upload(g);
        reducer_->AdamStep(p, dw.data(), dm.data(), dv.data(), dg.as_input(), count);
        const double bias1 = 1 - std::pow(double{p.beta1}, 7.0);
        const double bias2 = 1 - std::pow(double{p.beta2}, 7.0);
        for (size_t i = 0; i < count; ++i) {
          float grad = p.grad_scale * static_cast<float>(g.Get(i));
          if (!decoupled) grad += p.weight_decay * w[i];
          m[i] = p.beta1 * m[i] + (1 - p.beta1) * grad;
          v[i] = p.beta2 * v[i] + (1 - p.beta2) * grad * grad;
          const float m_hat = static_cast<float>(m[i] / bias1);
          const float v_hat = static_cast<float>(v[i] / bias2);
          float update = m_hat / (std::sqrt(v_hat) + p.eps);
          if (decoupled) update += p.weight_decay * w[i];
          w[i] = w[i] - p.lr * update;
        }
        ExpectClose(dw.Read(), w, "weights");
        ExpectClose(dm.Read(), m, "m");
        ExpectClose(dv.Read(), v, "v");
      }
    }
  }
}

// Expects `op` to throw pacer::Error whose message contains `words`.
template <typename Op>
void ExpectError(Op op, const std::string& words) {
  try {
    op();
    ADD_FAILURE() << "no error; expected one mentioning '" << words << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST_P(ReducerConformance, RejectsBadOperandsNamingThem) {
  Reducer& r = *reducer_;
  DeviceArray a(r, DType::kF32, 64, 0), b(r, DType::kF32, 64, 0);
  std::vector<ConstArray> seventeen(17, a.as_input());
  ExpectError([&] { r.Sum(Span<const ConstArray>(), b.as_output(), 64); }, "0 inputs");
  ExpectError([&] { r.Sum(seventeen, b.as_output(), 64); }, "17 inputs");
  std::vector<ConstArray> with_null(4, a.as_input());
  with_null[3].data = nullptr;
  ExpectError([&] { r.Sum(with_null, b.as_output(), 64); }, "input 3 is null");
  ExpectError([&] { r.Sum(seventeen, {nullptr, DType::kF32}, 0); }, "17 inputs");
  ExpectError([&] { r.Cast(a.as_input(), {nullptr, DType::kF16}, 64); }, "output is null");
  SgdParams momentum;
  momentum.momentum = 0.9f;
  float* w = static_cast<float*>(b.data());
  ExpectError([&] { r.SgdStep(momentum, w, nullptr, a.as_input(), 64); }, "momentum buffer");
  AdamParams adam;
  ExpectError([&] { r.AdamStep(adam, w, w, nullptr, a.as_input(), 64); }, "second moment v");
  adam.step = 0;
  ExpectError([&] { r.AdamStep(adam, w, w, w, a.as_input(), 64); }, "step must count from 1");
}

}  // namespace
}  // namespace pacer::testing
