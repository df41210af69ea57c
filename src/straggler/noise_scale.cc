#include "straggler/noise_scale.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {

double NoiseScale(double small_batch, double small_norm2, double big_batch, double big_norm2) {
  if (!(small_batch > 0 && big_batch > small_batch) || !(small_norm2 >= 0) || !(big_norm2 >= 0) ||
      !std::isfinite(small_norm2) || !std::isfinite(big_norm2)) {
    throw std::invalid_argument("noise scale from batches " + std::to_string(small_batch) +
                                " and " + std::to_string(big_batch) + ", squared norms " +
                                std::to_string(small_norm2) + " and " + std::to_string(big_norm2) +
                                ": expected 0 < small < big batch and finite norms >= 0");
  }
  const double signal =
      (big_batch * big_norm2 - small_batch * small_norm2) / (big_batch - small_batch);
  const double noise = (small_norm2 - big_norm2) / (1 / small_batch - 1 / big_batch);
  if (!(signal > 0)) return std::numeric_limits<double>::infinity();
  return std::max(noise, 0.0) / signal;
}

}  // namespace straggler
}  // namespace pacer
