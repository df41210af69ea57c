#pragma once

#include <cstddef>
#include <string>

namespace pacer {
namespace apps {

// One trainable tensor of an app's model: its values and gradient, each contiguous and at a fixed
// address for the model's life (GradientSync registers them).
struct Parameter {
  std::string name;
  float* values;
  float* grad;
  size_t count;
};

}  // namespace apps
}  // namespace pacer
