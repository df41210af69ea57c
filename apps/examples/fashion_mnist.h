#pragma once

#include <string>

#include "softmax_regression.h"

namespace pacer {
namespace examples {

// Where Debian's dataset-fashion-mnist package puts the data.
constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Reads Fashion-MNIST's gzipped IDX files (`train` or `t10k`) from `dir`: 28 x 28 pixels scaled
// to [0, 1] as 784 features, 10 classes. Throws std::runtime_error naming the file and what is
// wrong with it.
Dataset LoadFashionMnist(const std::string& dir, const std::string& split);

}  // namespace examples
}  // namespace pacer
