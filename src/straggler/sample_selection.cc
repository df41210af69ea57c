#include "straggler/sample_selection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {
namespace {

void CheckTarget(int batch, int target) {
  if (target < 1 || target > batch) {
    throw std::invalid_argument("a target of " + std::to_string(target) +
                                " samples of a batch of " + std::to_string(batch) +
                                ": it must be 1.." + std::to_string(batch));
  }
}

// Rows of `features` scaled to unit length; zero[i] says that row i is all zeros (kept so).
struct UnitRows {
  std::vector<float> rows;
  std::vector<bool> zero;
};

UnitRows Normalized(const std::vector<float>& features, int batch, int dim) {
  UnitRows unit{features, std::vector<bool>(batch, false)};
  for (int i = 0; i < batch; ++i) {
    float* row = unit.rows.data() + static_cast<size_t>(i) * dim;
    double norm = 0;
    for (int d = 0; d < dim; ++d) norm += double{row[d]} * row[d];
    unit.zero[i] = norm == 0;
    if (unit.zero[i]) continue;
    const float scale = static_cast<float>(1 / std::sqrt(norm));
    for (int d = 0; d < dim; ++d) row[d] *= scale;
  }
  return unit;
}

}  // namespace

std::vector<int> SelectRepresentatives(const std::vector<float>& features, int dim,
                                       const std::vector<float>& losses, int target) {
  const int batch = static_cast<int>(losses.size());
  if (batch == 0) throw std::invalid_argument("an empty batch: no losses given");
  if (dim < 1) throw std::invalid_argument("features of dimension " + std::to_string(dim));
  if (features.size() != static_cast<size_t>(batch) * dim) {
    throw std::invalid_argument(std::to_string(features.size()) + " features for " +
                                std::to_string(batch) + " samples of " + std::to_string(dim) +
                                " features each");
  }
  for (int i = 0; i < batch; ++i) {
    if (!std::isfinite(losses[i])) {
      throw std::invalid_argument("the loss of sample " + std::to_string(i) + " is not finite");
    }
  }
  CheckTarget(batch, target);
  const UnitRows unit = Normalized(features, batch, dim);
  auto distance = [&](int a, int b) {
    if (unit.zero[a] || unit.zero[b]) return 1.0;
    const float* x = unit.rows.data() + static_cast<size_t>(a) * dim;
    const float* y = unit.rows.data() + static_cast<size_t>(b) * dim;
    double dot = 0;
    for (int d = 0; d < dim; ++d) dot += double{x[d]} * y[d];
    return 1.0 - dot;
  };
  // Higher loss first, then lower index: the order of preference everywhere below.
  auto preferred = [&](int a, int b) {
    return losses[a] != losses[b] ? losses[a] > losses[b] : a < b;
  };
  std::vector<int> centres;
  std::vector<bool> is_centre(batch, false);
  std::vector<double> nearest(batch, std::numeric_limits<double>::infinity());
  std::vector<int> cluster(batch, 0);
  int next = 0;
  for (int i = 1; i < batch; ++i) {
    if (preferred(i, next)) next = i;
  }
  while (true) {
    const int c = static_cast<int>(centres.size());
    centres.push_back(next);
    is_centre[next] = true;
    nearest[next] = 0;  // a duplicate of an earlier centre still leads its own cluster
    cluster[next] = c;
    for (int i = 0; i < batch; ++i) {
      if (is_centre[i]) continue;
      const double d = distance(i, next);
      if (d < nearest[i]) {
        nearest[i] = d;
        cluster[i] = c;
      }
    }
    if (static_cast<int>(centres.size()) == target) break;
    next = -1;
    for (int i = 0; i < batch; ++i) {
      if (is_centre[i]) continue;
      if (next < 0 || nearest[i] > nearest[next] ||
          (nearest[i] == nearest[next] && preferred(i, next))) {
        next = i;
      }
    }
  }
  std::vector<int> kept(target, -1);
  for (int i = 0; i < batch; ++i) {
    int& best = kept[cluster[i]];
    if (best < 0 || preferred(i, best)) best = i;
  }
  std::sort(kept.begin(), kept.end(), preferred);
  return kept;
}

std::vector<int> DropAtRandom(int batch, int target, uint64_t seed) {
  CheckTarget(batch, target);
  std::vector<int> all(batch);
  std::iota(all.begin(), all.end(), 0);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < target; ++i) {  // a partial Fisher-Yates shuffle
    std::uniform_int_distribution<int> pick(i, batch - 1);
    std::swap(all[i], all[pick(rng)]);
  }
  all.resize(target);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace straggler
}  // namespace pacer
