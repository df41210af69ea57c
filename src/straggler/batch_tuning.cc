#include "straggler/batch_tuning.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {

double BatchProfile::Seconds(int batch) const {
  if (compute_s.empty()) {
    throw std::invalid_argument("worker " + std::to_string(worker) +
                                ": no measured batch size in its profile");
  }
  auto above = compute_s.lower_bound(batch);
  if (above != compute_s.end() && above->first == batch) return fixed_s + above->second;
  auto nearest = above;
  if (above == compute_s.end() ||
      (above != compute_s.begin() && batch - std::prev(above)->first < above->first - batch)) {
    nearest = std::prev(above);
  }
  return fixed_s + nearest->second * batch / nearest->first;
}

std::vector<TunedBatch> TuneBatches(const std::vector<BatchProfile>& profiles,
                                    const std::vector<int>& allowed, int nominal,
                                    double tolerance) {
  const std::set<int> sizes(allowed.begin(), allowed.end());
  if (sizes.empty() || *sizes.begin() <= 0) {
    throw std::invalid_argument("batch tuning needs positive batch sizes to choose from");
  }
  if (sizes.count(nominal) == 0) {
    throw std::invalid_argument("the nominal batch size " + std::to_string(nominal) +
                                " is not among the sizes the application can run");
  }
  double fastest = std::numeric_limits<double>::infinity();
  for (const BatchProfile& p : profiles) fastest = std::min(fastest, p.Seconds(nominal));
  std::vector<TunedBatch> tuned;
  double samples = 0;
  for (const BatchProfile& p : profiles) {
    int batch = *sizes.begin();
    for (int b : sizes) {
      if (b <= nominal && p.Seconds(b) <= fastest * (1 + tolerance)) batch = b;
    }
    tuned.push_back({p.worker, batch, 0});
    samples += batch;
  }
  for (TunedBatch& t : tuned) t.weight = t.batch / samples;
  return tuned;
}

}  // namespace straggler
}  // namespace pacer
