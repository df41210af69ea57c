#include "straggler/detector.h"

#include <algorithm>
#include <limits>

#include "straggler/median.h"

namespace pacer {
namespace straggler {
namespace {

// Ratio to the lowest positive value; 1 when there is none (nothing to compare with).
double Ratio(double value, double lowest) { return lowest > 0 ? value / lowest : 1; }

constexpr double kFairShare = 0.25;

}  // namespace

const char* KindName(Detection::Kind kind) {
  switch (kind) {
    case Detection::Kind::kCompute:
      return "compute";
    case Detection::Kind::kCommunication:
      return "communication";
    case Detection::Kind::kBoth:
      return "compute+communication";
    case Detection::Kind::kServer:
      return "server";
    case Detection::Kind::kPredicted:
      return "predicted";
  }
  return "?";
}

Detector::Detector(const DetectorOptions& options) : options_(options) {
  options_.window = std::max(1, options_.window);
}

void Detector::Push(std::deque<double>* values, double v) const {
  values->push_back(v);
  while (static_cast<int>(values->size()) > options_.window) values->pop_front();
}

// A node is judged once it has two values (or its whole window, if smaller): its first value
// alone, often a job's warm-up, must not flag it.
bool Detector::Judged(const std::deque<double>& values) const {
  return static_cast<int>(values.size()) >= std::min(2, options_.window);
}

void Detector::Observe(const WorkerIteration& w) {
  History& h = workers_[w.index];
  if (w.relayed) {  // judged afresh once it pushes itself
    h.busy.clear();
    h.transfer.clear();
    Push(&h.compute, w.compute_s);
    return;
  }
  if (w.skipped) {
    Push(&h.compute, w.compute_s);
    return;
  }
  Push(&h.busy, w.busy_s());
  Push(&h.compute, w.compute_s);
  Push(&h.transfer, w.transfer_s);
}

void Detector::Observe(const ServerInterval& s) { Push(&servers_[s.index], s.service_us_per_mb); }

std::vector<Detection> Detector::Detect() const {
  std::vector<Detection> found;
  const double inf = std::numeric_limits<double>::infinity();
  double fastest_busy = inf, fastest_compute = inf, fastest_transfer = inf;
  for (const auto& [index, h] : workers_) {
    if (h.busy.empty()) continue;  // relayed
    fastest_busy = std::min(fastest_busy, LowerMedian(h.busy));
    fastest_compute = std::min(fastest_compute, LowerMedian(h.compute));
    fastest_transfer = std::min(fastest_transfer, LowerMedian(h.transfer));
  }
  for (const auto& [index, h] : workers_) {
    if (!Judged(h.busy)) continue;
    const double ratio = Ratio(LowerMedian(h.busy), fastest_busy);
    if (!(ratio > options_.worker_ratio)) continue;
    if (!(LowerMedian(h.busy) - fastest_busy >= options_.floor_s)) continue;
    const double compute_ratio = Ratio(LowerMedian(h.compute), fastest_compute);
    const double transfer_ratio = Ratio(LowerMedian(h.transfer), fastest_transfer);
    // A part is to blame when it is past its own threshold and carries a fair share (a quarter)
    // of the excess: a 1 ms transfer that took 1.6 ms does not make a 3x compute straggler a
    // communication straggler too.
    const double excess = LowerMedian(h.busy) - fastest_busy;
    const bool compute = compute_ratio > options_.compute_ratio &&
                         LowerMedian(h.compute) - fastest_compute >= kFairShare * excess;
    const bool transfer = transfer_ratio > options_.transfer_ratio &&
                          LowerMedian(h.transfer) - fastest_transfer >= kFairShare * excess;
    // Neither part past its own threshold (the fastest parts came from different workers): the
    // part further past its fastest is to blame.
    Detection::Kind kind = compute && transfer ? Detection::Kind::kBoth
                           : transfer || (!compute && transfer_ratio > compute_ratio)
                               ? Detection::Kind::kCommunication
                               : Detection::Kind::kCompute;
    found.push_back({kind, index, ratio});
  }
  // The reference is the true median server (of two, their mean): a lower median would make the
  // slower of two servers a straggler whenever it trails the faster by the ratio.
  std::vector<double> service;
  for (const auto& [index, values] : servers_) {
    if (Judged(values)) service.push_back(LowerMedian(values));
  }
  std::sort(service.begin(), service.end());
  const size_t n = service.size();
  const double median = n == 0 ? 0 : (service[(n - 1) / 2] + service[n / 2]) / 2;
  for (const auto& [index, values] : servers_) {
    if (!Judged(values)) continue;
    const double ratio = Ratio(LowerMedian(values), median);
    if (ratio > options_.server_ratio) found.push_back({Detection::Kind::kServer, index, ratio});
  }
  return found;
}

std::vector<Detection> Detector::DetectPredicted(const std::map<int, double>& predicted) const {
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& [index, t] : predicted) fastest = std::min(fastest, t);
  std::vector<Detection> found;
  for (const auto& [index, t] : predicted) {
    const double ratio = Ratio(t, fastest);
    if (ratio > 1 + options_.predicted_margin && t - fastest >= options_.floor_s) {
      found.push_back({Detection::Kind::kPredicted, index, ratio});
    }
  }
  return found;
}

}  // namespace straggler
}  // namespace pacer
