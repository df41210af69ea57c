#include "server/parameter_state.h"

#include <cstring>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

ParameterState::ParameterState(const void* initial, size_t count, const Allocator& allocate)
    : size_(count) {
  uint8_t* out = nullptr;
  values_ = allocate(count * sizeof(float), &out);
  data_ = reinterpret_cast<float*>(out);
  if (count > 0) std::memcpy(data_, initial, count * sizeof(float));
}

void ParameterState::Moment::Allocate(size_t count, const ParameterState::Allocator& allocate,
                                      const uint8_t* bytes) {
  uint8_t* out = nullptr;
  memory = allocate(count * sizeof(float), &out);
  data = reinterpret_cast<float*>(out);
  if (count == 0) return;
  if (bytes) {
    std::memcpy(out, bytes, count * sizeof(float));
  } else {
    std::memset(out, 0, count * sizeof(float));
  }
}

void ParameterState::Apply(const OptimizerSpec& spec, Reducer& reducer, const float* grad,
                           float grad_scale, const Allocator& allocate, float lr_scale) {
  if (values_.owner().use_count() > 1) {
    uint8_t* out = nullptr;
    Buffer fresh = allocate(size_ * sizeof(float), &out);
    std::memcpy(out, data_, size_ * sizeof(float));
    values_ = std::move(fresh);
    data_ = reinterpret_cast<float*>(out);
  }
  const ConstArray g{grad, DType::kF32};
  if (spec.kind == OptimizerSpec::Kind::kSgd) {
    SgdParams p = spec.sgd;
    p.lr *= lr_scale;
    p.grad_scale = grad_scale;
    if (p.momentum != 0 && !momentum_.data) momentum_.Allocate(size_, allocate);
    reducer.SgdStep(p, data_, momentum_.data, g, size_);
    return;
  }
  if (!momentum_.data) momentum_.Allocate(size_, allocate);
  if (!second_moment_.data) second_moment_.Allocate(size_, allocate);
  AdamParams p = spec.adam;
  p.lr *= lr_scale;
  p.grad_scale = grad_scale;
  p.step = ++steps_;
  reducer.AdamStep(p, data_, momentum_.data, second_moment_.data, g, size_);
}

void ParameterState::Encode(ByteWriter& out) const {
  out.PutArray(data_, size_);
  out.PutArray(momentum_.data, momentum_.data ? size_ : 0);
  out.PutArray(second_moment_.data, second_moment_.data ? size_ : 0);
  out.Put(steps_);
}

std::unique_ptr<ParameterState> ParameterState::Decode(ByteReader& in, const Allocator& allocate) {
  size_t count = 0;
  const uint8_t* values = in.GetArrayBytes<float>(&count);
  auto state = std::make_unique<ParameterState>(values, count, allocate);
  for (Moment* moment : {&state->momentum_, &state->second_moment_}) {
    size_t n = 0;
    const uint8_t* bytes = in.GetArrayBytes<float>(&n);
    if (n != 0 && n != count) {
      throw Error(
          StrCat(in.what(), ": an optimizer moment of ", n, " values for ", count, " parameters"));
    }
    if (n > 0) moment->Allocate(n, allocate, bytes);
  }
  state->steps_ = in.Get<int64_t>();
  return state;
}

}  // namespace pacer
