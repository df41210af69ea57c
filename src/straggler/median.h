#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pacer {
namespace straggler {

// The lower median of `values`: of two, the smaller, so that one slow value among two never
// makes a straggler. 0 when there are none.
template <typename Values>
double LowerMedian(const Values& values) {
  std::vector<double> v(values.begin(), values.end());
  if (v.empty()) return 0;
  const auto middle = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), middle, v.end());
  return *middle;
}

}  // namespace straggler
}  // namespace pacer
