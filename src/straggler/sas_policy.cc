#include "straggler/sas_policy.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {

std::vector<double> SasPolicy::Capacities(const std::vector<double>& seconds_per_byte) {
  std::vector<double> known;
  for (double s : seconds_per_byte) {
    if (!(s >= 0)) throw std::invalid_argument("a server's service time per byte below zero");
    if (s > 0) known.push_back(1 / s);
  }
  double median = 1;
  if (!known.empty()) {
    std::nth_element(known.begin(), known.begin() + known.size() / 2, known.end());
    median = known[known.size() / 2];
  }
  std::vector<double> capacity;
  for (double s : seconds_per_byte) capacity.push_back(s > 0 ? 1 / s : median);
  return capacity;
}

double SasPolicy::Imbalance(const std::vector<KeyRangeLoad>& ranges,
                            const std::vector<double>& capacity) {
  std::vector<double> load = LoadAfter(ranges, {}, static_cast<int>(capacity.size()));
  const double total_load = std::accumulate(load.begin(), load.end(), 0.0);
  const double total_capacity = std::accumulate(capacity.begin(), capacity.end(), 0.0);
  if (total_load <= 0 || total_capacity <= 0) return 1;
  double slowest = 0;
  for (size_t s = 0; s < load.size(); ++s) slowest = std::max(slowest, load[s] / capacity[s]);
  return slowest / (total_load / total_capacity);
}

SasDecision SasPolicy::Decide(const std::vector<KeyRangeLoad>& ranges,
                              const std::vector<double>& seconds_per_byte) const {
  const int servers = static_cast<int>(seconds_per_byte.size());
  for (const KeyRangeLoad& r : ranges) {
    if (r.server < 0 || r.server >= servers) {
      throw std::invalid_argument("range " + std::to_string(r.range) + " is owned by server " +
                                  std::to_string(r.server) + " of " + std::to_string(servers));
    }
  }
  const std::vector<double> capacity = Capacities(seconds_per_byte);
  SasDecision decision;
  decision.imbalance = decision.planned = Imbalance(ranges, capacity);
  if (decision.imbalance <= options_.imbalance) return decision;
  std::vector<RangeMove> moves = PlanLoad(ranges, capacity);
  std::vector<KeyRangeLoad> after = ranges;
  for (const RangeMove& m : moves) {
    for (KeyRangeLoad& r : after) {
      if (r.range == m.range) r.server = m.to;
    }
  }
  const double planned = Imbalance(after, capacity);
  if (planned > decision.imbalance * (1 - options_.min_gain)) return decision;
  decision.moves = std::move(moves);
  decision.planned = planned;
  return decision;
}

}  // namespace straggler
}  // namespace pacer
