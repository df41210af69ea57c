#include "straggler/elastic_parallelism.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {
namespace {

// Unmeasured workers count as the mean measured capacity; all unmeasured: 1 each.
std::vector<double> Known(const std::vector<double>& capacity) {
  double sum = 0;
  int measured = 0;
  for (size_t w = 0; w < capacity.size(); ++w) {
    if (!(capacity[w] >= 0) || std::isinf(capacity[w])) {
      throw std::invalid_argument("worker " + std::to_string(w) + "'s capacity is " +
                                  std::to_string(capacity[w]));
    }
    if (capacity[w] > 0) {
      sum += capacity[w];
      ++measured;
    }
  }
  std::vector<double> known = capacity;
  for (double& c : known) {
    if (c == 0) c = measured == 0 ? 1 : sum / measured;
  }
  return known;
}

}  // namespace

std::vector<int64_t> ElasticShares(const std::vector<double>& capacity, int64_t total,
                                   int64_t min_share, int64_t max_share) {
  const int64_t n = static_cast<int64_t>(capacity.size());
  if (n == 0 || min_share < 0 || max_share < min_share || total < n * min_share ||
      total > n * max_share) {
    throw std::invalid_argument("cannot share " + std::to_string(total) + " tasks among " +
                                std::to_string(n) + " workers with " + std::to_string(min_share) +
                                " to " + std::to_string(max_share) + " each");
  }
  const std::vector<double> known = Known(capacity);
  // Water-filling: workers whose proportional share breaks a limit are pinned to it, the rest
  // share what is left. The side that breaks more is pinned first, so pinning never overshoots.
  std::vector<double> ideal(n);
  std::vector<bool> pinned(n, false);
  for (int64_t round = 0; round <= n; ++round) {
    double left = static_cast<double>(total), free_capacity = 0;
    for (int64_t w = 0; w < n; ++w) {
      if (pinned[w]) {
        left -= ideal[w];
      } else {
        free_capacity += known[w];
      }
    }
    double over = 0, under = 0;
    for (int64_t w = 0; w < n; ++w) {
      if (pinned[w]) continue;
      ideal[w] = left * known[w] / free_capacity;
      over += std::max(0.0, ideal[w] - static_cast<double>(max_share));
      under += std::max(0.0, static_cast<double>(min_share) - ideal[w]);
    }
    if (over == 0 && under == 0) break;
    for (int64_t w = 0; w < n; ++w) {
      if (pinned[w]) continue;
      if (over >= under && ideal[w] > static_cast<double>(max_share)) {
        ideal[w] = static_cast<double>(max_share);
        pinned[w] = true;
      } else if (under > over && ideal[w] < static_cast<double>(min_share)) {
        ideal[w] = static_cast<double>(min_share);
        pinned[w] = true;
      }
    }
  }
  std::vector<int64_t> shares(n);
  int64_t assigned = 0;
  for (int64_t w = 0; w < n; ++w) {
    shares[w] = std::clamp(static_cast<int64_t>(std::floor(ideal[w] + 1e-9)), min_share, max_share);
    assigned += shares[w];
  }
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return ideal[a] - static_cast<double>(shares[a]) > ideal[b] - static_cast<double>(shares[b]);
  });
  for (size_t i = 0; assigned < total; i = (i + 1) % order.size()) {
    if (shares[order[i]] < max_share) {
      ++shares[order[i]];
      ++assigned;
    }
  }
  // Rounding errors of the pinned ones can leave one task too many.
  for (size_t i = order.size() - 1; assigned > total; i = (i + order.size() - 1) % order.size()) {
    if (shares[order[i]] > min_share) {
      --shares[order[i]];
      --assigned;
    }
  }
  return shares;
}

}  // namespace straggler
}  // namespace pacer
