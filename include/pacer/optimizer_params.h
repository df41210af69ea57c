#pragma once

#include <cstdint>

namespace pacer {

// The optimizers' settings: the Reducer's fused steps take them, --optimizer (OptimizerSpec) sets
// them.

// Plain, momentum and Nesterov SGD. Per element, with g = grad_scale * grad + weight_decay * w:
//   momentum == 0:  w -= lr * g
//   otherwise:      m = momentum * m + g;  w -= lr * (nesterov ? g + momentum * m : m)
struct SgdParams {
  float lr = 0.01f;
  float momentum = 0.f;
  bool nesterov = false;
  float weight_decay = 0.f;
  float grad_scale = 1.f;  // 1/N to turn a sum over N workers into a mean
};

// Adam (weight decay added to the gradient) and AdamW (decoupled: w -= lr * wd * w). `step` counts
// from 1 and sets the bias corrections 1 - beta^step.
struct AdamParams {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.f;
  bool decoupled_weight_decay = false;
  int64_t step = 1;
  float grad_scale = 1.f;
};

}  // namespace pacer
