#include "straggler/sync_chooser.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "straggler/noise_scale.h"

namespace pacer {
namespace straggler {
namespace {

using Times = std::vector<std::vector<double>>;

void Check(const SyncProfile& p) {
  if (p.batch < 1) throw std::invalid_argument("a profile's batch must be at least 1");
  if (p.times.empty() || p.times[0].empty()) {
    throw std::invalid_argument("a profile needs at least one iteration of one worker");
  }
  for (size_t r = 0; r < p.times.size(); ++r) {
    if (p.times[r].size() != p.times[0].size()) {
      throw std::invalid_argument("profile row " + std::to_string(r) + " has " +
                                  std::to_string(p.times[r].size()) + " workers' times, row 0 " +
                                  std::to_string(p.times[0].size()));
    }
    for (double t : p.times[r]) {
      if (!(t > 0) || !std::isfinite(t)) {
        throw std::invalid_argument("profile row " + std::to_string(r) + " has time " +
                                    std::to_string(t) + "; times must be positive");
      }
    }
  }
}

// The mean over rows of the `rank`-th smallest time (0-based) among `workers`.
double MeanRanked(const Times& times, const std::vector<int>& workers, size_t rank) {
  double sum = 0;
  std::vector<double> row;
  for (const std::vector<double>& t : times) {
    row.clear();
    for (int w : workers) row.push_back(t[static_cast<size_t>(w)]);
    std::nth_element(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(rank), row.end());
    sum += row[rank];
  }
  return sum / static_cast<double>(times.size());
}

double MeanSlowest(const Times& times, const std::vector<int>& workers) {
  return MeanRanked(times, workers, workers.size() - 1);
}

// SSP's round: the mean over blocks of `span` rows of the slowest worker's mean in the block
// (a last, shorter block counts by its rows).
double BlockRound(const Times& times, size_t span) {
  const size_t workers = times[0].size();
  double sum = 0;
  for (size_t begin = 0; begin < times.size(); begin += span) {
    const size_t end = std::min(times.size(), begin + span);
    double slowest = 0;
    for (size_t w = 0; w < workers; ++w) {
      double own = 0;
      for (size_t r = begin; r < end; ++r) own += times[r][w];
      slowest = std::max(slowest, own);
    }
    sum += slowest;
  }
  return sum / static_cast<double>(times.size());
}

struct Unit {
  double round_s;
  int workers;
};

class Table {
 public:
  Table(const SyncProfile& profile, const SyncChooserOptions& options)
      : profile_(profile), options_(options) {}

  void Add(std::string mode, double update_s, double update_batch, double staleness) {
    SyncPrediction p{std::move(mode), update_s, update_batch, staleness, 0};
    // Noise without signal (an infinite B_noise): iterations in proportion to 1 / B.
    const double iterations = std::isinf(profile_.noise_scale)
                                  ? 1 / update_batch
                                  : IterationsToTarget(profile_.noise_scale, update_batch);
    p.time_to_target = iterations * (1 + options_.staleness_penalty * staleness) * update_s;
    choice_.table.push_back(p);
  }

  // Units each applying their updates on arrival.
  void AddAsync(std::string mode, const std::vector<Unit>& units) {
    double rate = 0, samples = 0;
    for (const Unit& u : units) {
      rate += 1 / u.round_s;
      samples += u.workers * profile_.batch / u.round_s;
    }
    double staleness = 0;
    for (const Unit& u : units) staleness = std::max(staleness, u.round_s * (rate - 1 / u.round_s));
    Add(std::move(mode), 1 / rate, samples / rate, staleness);
  }

  SyncChoice Pick() {
    const auto best = std::min_element(choice_.table.begin(), choice_.table.end(),
                                       [](const SyncPrediction& a, const SyncPrediction& b) {
                                         return a.time_to_target < b.time_to_target;
                                       });
    choice_.mode = best->mode;
    return choice_;
  }

 private:
  const SyncProfile& profile_;
  const SyncChooserOptions& options_;
  SyncChoice choice_;
};

// The workers split where their sorted mean times jump by more than `gap`.
std::vector<std::vector<int>> GroupsOf(const Times& times, double gap) {
  const size_t n = times[0].size();
  std::vector<double> mean(n, 0);
  for (const std::vector<double>& row : times) {
    for (size_t w = 0; w < n; ++w) mean[w] += row[w] / static_cast<double>(times.size());
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return mean[static_cast<size_t>(a)] < mean[static_cast<size_t>(b)];
  });
  std::vector<std::vector<int>> groups{{order[0]}};
  for (size_t i = 1; i < n; ++i) {
    if (mean[static_cast<size_t>(order[i])] - mean[static_cast<size_t>(order[i - 1])] > gap) {
      groups.emplace_back();
    }
    groups.back().push_back(order[i]);
  }
  for (std::vector<int>& g : groups) std::sort(g.begin(), g.end());
  std::sort(groups.begin(), groups.end());
  return groups;
}

std::string Spell(const std::vector<std::vector<int>>& groups, int bound) {
  std::string s = "groups:" + std::to_string(bound) + ":";
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i = 0; i < groups[g].size(); ++i) {
      s += (i > 0 ? "+" : g > 0 ? "/" : "") + std::to_string(groups[g][i]);
    }
  }
  return s;
}

}  // namespace

SyncChoice ChooseSync(const SyncProfile& profile, const SyncChooserOptions& options) {
  Check(profile);
  const Times& t = profile.times;
  const int n = static_cast<int>(t[0].size());
  std::vector<int> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  const double b = profile.batch;
  Table table(profile, options);
  table.Add("bsp", MeanSlowest(t, all), n * b, 0);
  for (int k = 1; k < n; ++k) {
    table.Add("backup:" + std::to_string(k), MeanRanked(t, all, static_cast<size_t>(n - k - 1)),
              (n - k) * b, 0);
  }
  for (int s : options.ssp_bounds) {
    table.Add("ssp:" + std::to_string(s), BlockRound(t, static_cast<size_t>(s) + 1) / n, b, n - 1);
  }
  std::vector<Unit> workers;
  for (int w = 0; w < n; ++w) workers.push_back({MeanSlowest(t, {w}), 1});
  table.AddAsync("consgd", workers);
  const std::vector<std::vector<int>> groups = GroupsOf(t, options.group_gap_s);
  if (groups.size() > 1 && static_cast<int>(groups.size()) < n) {
    std::vector<Unit> units;
    for (const std::vector<int>& g : groups) {
      units.push_back({MeanSlowest(t, g), static_cast<int>(g.size())});
    }
    table.AddAsync(Spell(groups, std::max(profile.iterations_left, 1)), units);
  }
  return table.Pick();
}

}  // namespace straggler
}  // namespace pacer
