#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pacer {
namespace bench {

// The q-quantile (0..1) of `v` by rank (no interpolation); 0 when empty.
inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(q * v.size()));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return v[i];
}

}  // namespace bench
}  // namespace pacer
