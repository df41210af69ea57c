#pragma once

#include <cstdint>
#include <string>

namespace pacer {
namespace apps {

// `optimizer` (an --optimizer spec) with --lr-decay-at's fractions of the planned run added as its
// lr_steps, clocks of the run of `planned` iterations: `decay_at` empty leaves it as it is, as does
// a spec with lr_steps of its own unless `decay_at_given` (then both are asked for: an error).
// Throws std::invalid_argument naming the flag for fractions outside (0, 1).
std::string WithLearningRateSteps(const std::string& optimizer, const std::string& decay_at,
                                  bool decay_at_given, int64_t planned);

}  // namespace apps
}  // namespace pacer
