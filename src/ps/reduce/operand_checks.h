#pragma once

// The operand checks of every Reducer back end, with the same messages on each. Header-only so
// the CUDA library, which links no other Pacer library, shares them.

#include <initializer_list>
#include <string>
#include <utility>

#include "pacer/error.h"
#include "pacer/reducer.h"

namespace pacer::reduce {

inline std::string CountText(size_t count) { return " (count " + std::to_string(count) + ")"; }

inline void CheckSumOperands(Span<const ConstArray> inputs, const MutableArray& out, size_t count) {
  if (inputs.empty() || inputs.size() > Reducer::kMaxInputs) {
    throw Error("Sum: " + std::to_string(inputs.size()) + " inputs; between 1 and " +
                std::to_string(Reducer::kMaxInputs) + " are supported");
  }
  if (count == 0) return;
  for (size_t j = 0; j < inputs.size(); ++j) {
    if (inputs[j].data == nullptr) {
      throw Error("Sum: input " + std::to_string(j) + " is null" + CountText(count));
    }
  }
  if (out.data == nullptr) throw Error("Sum: output is null" + CountText(count));
}

// Throws naming the first null operand of an optimizer step `op`.
inline void CheckOperandsPresent(
    const char* op, size_t count,
    std::initializer_list<std::pair<const char*, const void*>> operands) {
  if (count == 0) return;
  for (const auto& [name, p] : operands) {
    if (p == nullptr)
      throw Error(std::string(op) + " step: " + name + " is null" + CountText(count));
  }
}

inline void CheckSgdOperands(const SgdParams& params, const float* weights,
                             const float* momentum_buf, const ConstArray& grad, size_t count) {
  CheckOperandsPresent("SGD", count, {{"weights", weights}, {"gradient", grad.data}});
  if (params.momentum != 0.f) {
    CheckOperandsPresent("SGD", count, {{"momentum buffer (momentum is not 0)", momentum_buf}});
  }
}

inline void CheckAdamOperands(const AdamParams& params, const float* weights, const float* m,
                              const float* v, const ConstArray& grad, size_t count) {
  CheckOperandsPresent("Adam", count,
                       {{"weights", weights},
                        {"gradient", grad.data},
                        {"first moment m", m},
                        {"second moment v", v}});
  if (params.step < 1) {
    throw Error("Adam: step must count from 1, got " + std::to_string(params.step));
  }
}

}  // namespace pacer::reduce
