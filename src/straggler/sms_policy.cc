#include "straggler/sms_policy.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "straggler/median.h"

namespace pacer {
namespace straggler {
namespace {

// The predictor sees the median of each worker's last 3 computes, so that a single stall (of a
// loaded host, or a periodic evaluation) neither orders a shrink nor shows as a period; a step
// reaches it one iteration late, which predicting one step further makes up.
constexpr size_t kFiltered = 3;
constexpr int kFilterLag = 1;

}  // namespace

SmsPolicy::SmsPolicy(const SmsOptions& options) : options_(options) {}

void SmsPolicy::Allow(int worker, std::vector<int> sizes) {
  if (sizes.empty()) {
    throw std::invalid_argument("worker " + std::to_string(worker) + " allows no batch size");
  }
  for (int size : sizes) {
    if (size <= 0) {
      throw std::invalid_argument("worker " + std::to_string(worker) + " allows batch size " +
                                  std::to_string(size) + ", which is not positive");
    }
  }
  std::sort(sizes.begin(), sizes.end());
  Worker& w = workers_[worker];
  w.ordered = sizes.back();
  w.sizes = std::move(sizes);
}

void SmsPolicy::Observe(int worker, double compute_s, int batch) {
  Worker& w = workers_[worker];
  if (w.sizes.empty() || batch <= 0) return;  // its full batch is not known
  w.recent.push_back({compute_s, batch});
  if (w.recent.size() > kFiltered) w.recent.pop_front();
  if (w.recent.size() < kFiltered) return;
  std::vector<double> scaled, raw;
  bool one_size = true;
  for (const auto& [seconds, size] : w.recent) {
    scaled.push_back(seconds * w.sizes.back() / size);
    raw.push_back(seconds);
    one_size &= size == batch;
  }
  w.measured_s = LowerMedian(scaled);
  w.at_size_s = one_size ? LowerMedian(raw) : 0;
  w.at_size_batch = one_size ? batch : 0;
  if (one_size && batch == w.ordered && w.shrunk_s == 0) w.shrunk_s = w.at_size_s;
  if (!w.predictor) w.predictor = MakePredictor(options_.predictor);
  w.predictor->Observe(w.measured_s);
}

int SmsPolicy::BatchOf(int worker) const {
  const auto it = workers_.find(worker);
  return it == workers_.end() ? 0 : it->second.ordered;
}

bool SmsPolicy::SkipsOf(int worker) const {
  const auto it = workers_.find(worker);
  return it != workers_.end() && it->second.skips;
}

bool SmsPolicy::Slow(double seconds, double median_s) const {
  return seconds > (1 + options_.margin) * median_s && seconds - median_s >= options_.floor_s;
}

int SmsPolicy::Target(const Worker& w, double predicted_s, double median_s) const {
  const int full = w.sizes.back();
  const int current = w.ordered;
  // Back at the full batch, it is judged once its measurements are all of it: those of the
  // smaller batch, scaled up, overstate a model whose compute has a fixed part.
  if (current == full && w.at_size_batch != full) return full;
  if (current != full && w.shrunk_s > 0 && w.at_size_s > 0 &&
      w.at_size_s * (1 + options_.margin) < w.shrunk_s) {
    return full;  // as fast again at the same size as it was slow: the slowdown is over
  }
  // A prediction of the recent level (no period known) trails the measurements: once they are
  // fast, what it still says is the past's.
  const bool slow = Slow(predicted_s, median_s) &&
                    (w.predictor->FollowsAPeriod() || Slow(w.measured_s, median_s));
  if (!slow) {
    // Back to the full batch once it is measured fast too: a prediction of the phase's end that
    // comes early (a period still being refined) would cost slow iterations at the full batch,
    // one that comes late only a few small batches.
    return current != full && Slow(w.measured_s, median_s) ? current : full;
  }
  const double wanted = full * median_s / predicted_s;
  if (current != full && std::abs(wanted - current) <= options_.resize_fraction * current) {
    return current;
  }
  // Scaling to the full batch overstates a model whose compute has a fixed part: a worker that
  // keeps pace at its size is not shrunk further.
  if (current != full && wanted < current && w.at_size_s > 0 && !Slow(w.at_size_s, median_s)) {
    return current;
  }
  int target = w.sizes.front();
  for (int size : w.sizes) {
    if (size <= wanted * (1 + options_.size_tolerance)) target = size;
  }
  return target;
}

std::vector<SmsShrink> SmsPolicy::Decide() {
  std::map<int, double> predicted;
  for (const auto& [index, w] : workers_) {
    if (w.predictor) predicted[index] = w.predictor->PredictAhead(options_.lookahead + kFilterLag);
  }
  std::vector<SmsShrink> orders;
  if (predicted.size() < 2) return orders;  // nobody to be slower than
  std::vector<double> values;
  for (const auto& [index, t] : predicted) values.push_back(t);
  const double median = LowerMedian(values);
  for (const auto& [index, t] : predicted) {
    Worker& w = workers_[index];
    const int target = Target(w, t, median);
    const bool slow_link = slow_links_.count(index) != 0;
    const bool skip = target < w.sizes.back() || slow_link;
    if (target == w.ordered && skip == w.skips) continue;
    if (target != w.ordered) w.shrunk_s = 0;  // measured anew at the new size
    w.ordered = target;
    w.skips = skip;
    orders.push_back(
        {index, target, static_cast<double>(target) / w.sizes.back(), t, median, skip, slow_link});
  }
  return orders;
}

}  // namespace straggler
}  // namespace pacer
