#include "learning_rate_steps.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace pacer {
namespace apps {

std::string WithLearningRateSteps(const std::string& optimizer, const std::string& decay_at,
                                  bool decay_at_given, int64_t planned) {
  // An --optimizer with its own lr_steps overrides the app's default schedule, not a given one.
  const bool own_steps = optimizer.find("lr_steps") != std::string::npos;
  if (own_steps && decay_at_given) {
    throw std::invalid_argument("--lr-decay-at with --optimizer=" + optimizer +
                                ", which has its own lr_steps");
  }
  if (decay_at.empty() || own_steps) return optimizer;
  std::string steps;
  std::stringstream fractions(decay_at);
  std::string fraction;
  while (std::getline(fractions, fraction, ',')) {
    char* end = nullptr;
    const double f = std::strtod(fraction.c_str(), &end);
    if (fraction.empty() || *end != '\0' || !(f > 0 && f < 1)) {
      throw std::invalid_argument("--lr-decay-at=" + decay_at +
                                  ": expected fractions of the run between 0 and 1");
    }
    steps += (steps.empty() ? "" : "/") +
             std::to_string(std::max<int64_t>(1, static_cast<int64_t>(f * planned)));
  }
  return optimizer + (optimizer.find(':') == std::string::npos ? ":" : ",") + "lr_steps=" + steps;
}

}  // namespace apps
}  // namespace pacer
