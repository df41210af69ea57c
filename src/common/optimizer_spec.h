#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pacer/optimizer_params.h"

namespace pacer {

// The update rule servers apply when a synchronization rule fires, as --optimizer spells it:
// "sgd:lr=0.1,momentum=0.9,nesterov,wd=1e-4", "adam:lr=1e-3,beta1=0.9,beta2=0.999,eps=1e-8,wd=0"
// or "adamw:..." (decoupled weight decay). Every field is optional. A step schedule, as MXNet's
// servers have: "lr_steps=1000/1500,lr_factor=0.1" multiplies the rate by 0.1 for the gradients
// of clocks 1000 on, and by 0.01 from 1500 on.
struct OptimizerSpec {
  enum class Kind { kSgd, kAdam };
  Kind kind = Kind::kSgd;
  SgdParams sgd;
  AdamParams adam;
  std::vector<int64_t> lr_steps;  // increasing clocks
  float lr_factor = 0.1f;

  // Throws pacer::Error naming the part of `text` that is wrong.
  static OptimizerSpec Parse(const std::string& text);
  // What the schedule multiplies the learning rate by for gradients of iteration `clock`.
  float LearningRateScale(int64_t clock) const;
};

}  // namespace pacer
