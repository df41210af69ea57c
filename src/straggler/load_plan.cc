#include "straggler/load_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {

std::vector<int> PlaceLargestFirst(const std::vector<double>& loads, int servers) {
  if (servers < 1)
    throw std::invalid_argument("placement over " + std::to_string(servers) + " servers");
  std::vector<size_t> order(loads.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return loads[a] > loads[b]; });
  std::vector<double> total(servers, 0);
  std::vector<int> owner(loads.size(), 0);
  for (size_t i : order) {
    const int s = static_cast<int>(std::min_element(total.begin(), total.end()) - total.begin());
    owner[i] = s;
    total[s] += loads[i];
  }
  return owner;
}

std::vector<double> LoadAfter(const std::vector<KeyRangeLoad>& ranges,
                              const std::vector<RangeMove>& moves, int servers) {
  std::vector<int> owner(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) owner[i] = ranges[i].server;
  for (const RangeMove& m : moves) {
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (ranges[i].range == m.range) owner[i] = m.to;
    }
  }
  std::vector<double> load(servers, 0);
  for (size_t i = 0; i < ranges.size(); ++i) load[owner[i]] += ranges[i].load;
  return load;
}

std::vector<RangeMove> PlanLoad(const std::vector<KeyRangeLoad>& ranges,
                                const std::vector<double>& capacity) {
  const int servers = static_cast<int>(capacity.size());
  for (double c : capacity) {
    if (!(c >= 0)) throw std::invalid_argument("a server capacity below zero");
  }
  std::vector<double> load(servers, 0);
  std::vector<int> owner(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const KeyRangeLoad& r = ranges[i];
    if (r.server < 0 || r.server >= servers) {
      throw std::invalid_argument("range " + std::to_string(r.range) + " is owned by server " +
                                  std::to_string(r.server) + " of " + std::to_string(servers));
    }
    owner[i] = r.server;
    load[r.server] += r.load;
  }
  // A server's time per iteration; one without capacity never finishes what it holds.
  auto time = [&](int s, double l) {
    return capacity[s] > 0 ? l / capacity[s] : (l > 0 ? INFINITY : 0.0);
  };
  std::vector<RangeMove> moves;
  // Each step relieves the slowest server of its largest range that some server would finish
  // sooner than the slowest one does now; it stops when no range can shorten the slowest.
  const size_t max_steps = ranges.size() * static_cast<size_t>(servers) + 1;
  for (size_t step = 0; step < max_steps; ++step) {
    int from = 0;
    for (int s = 1; s < servers; ++s) {
      if (time(s, load[s]) > time(from, load[from])) from = s;
    }
    const double slowest = time(from, load[from]);
    int best = -1, best_to = -1;
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (owner[i] != from || (best >= 0 && ranges[i].load <= ranges[best].load)) continue;
      int to = -1;
      for (int s = 0; s < servers; ++s) {
        if (s == from || capacity[s] <= 0) continue;
        if (to < 0 || time(s, load[s] + ranges[i].load) < time(to, load[to] + ranges[i].load)) {
          to = s;
        }
      }
      if (to >= 0 && time(to, load[to] + ranges[i].load) < slowest) {
        best = static_cast<int>(i);
        best_to = to;
      }
    }
    if (best < 0) break;
    const KeyRangeLoad& r = ranges[best];
    moves.push_back({r.range, from, best_to, r.load});
    owner[best] = best_to;
    load[from] -= r.load;
    load[best_to] += r.load;
  }
  return moves;
}

}  // namespace straggler
}  // namespace pacer
