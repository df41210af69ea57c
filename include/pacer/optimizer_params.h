#pragma once

#include <cstdint>

namespace pacer {

// The optimizers' settings: the Reducer's fused steps take them, --optimizer (OptimizerSpec) sets
// them.

/// Plain, momentum and Nesterov SGD. Per element, with g = grad_scale * grad + weight_decay * w:
///
/// ```
///   momentum == 0:  w -= lr * g
///   otherwise:      m = momentum * m + g;  w -= lr * (nesterov ? g + momentum * m : m)
/// ```
struct SgdParams {
  float lr = 0.01f;          ///< learning rate
  float momentum = 0.f;      ///< 0: plain SGD, without momentum state
  bool nesterov = false;     ///< Nesterov momentum instead of classical
  float weight_decay = 0.f;  ///< L2 penalty, added to the gradient
  float grad_scale = 1.f;    ///< 1/N to turn a sum over N workers into a mean
};

/// Adam (weight decay added to the gradient) and AdamW (decoupled: w -= lr * wd * w). `step`
/// counts from 1 and sets the bias corrections 1 - beta^step.
struct AdamParams {
  float lr = 1e-3f;                     ///< learning rate
  float beta1 = 0.9f;                   ///< decay of the first moment (the gradients' mean)
  float beta2 = 0.999f;                 ///< decay of the second moment (their squares' mean)
  float eps = 1e-8f;                    ///< the denominator is sqrt(v / (1 - beta2^step)) + eps
  float weight_decay = 0.f;             ///< wd: added to the gradient, or decoupled (AdamW)
  bool decoupled_weight_decay = false;  ///< AdamW: w -= lr * wd * w apart from the gradient
  int64_t step = 1;                     ///< this update's number, from 1
  float grad_scale = 1.f;               ///< 1/N to turn a sum over N workers into a mean
};

}  // namespace pacer
