#pragma once

#include <cstddef>

namespace pacer {

// Whether ||a - b|| <= eps x ||b|| over n floats (SMS's skip: a gradient or parameters that
// moved little from the ones last sent), summed in doubles.
inline bool WithinRelative(const float* a, const float* b, size_t n, double eps) {
  double moved = 0, norm = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    moved += d * d;
    norm += static_cast<double>(b[i]) * b[i];
  }
  return moved <= eps * eps * norm;
}

}  // namespace pacer
