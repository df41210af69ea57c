#include "straggler/task_projection.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {

Projection Project(const std::vector<WorkerProgress>& workers, double now_s,
                   const ProjectionOptions& options) {
  if (!(now_s >= 0)) throw std::invalid_argument("the iteration's time is below zero");
  const double never = std::numeric_limits<double>::infinity();
  Projection p;
  for (size_t w = 0; w < workers.size(); ++w) {
    const WorkerProgress& progress = workers[w];
    if (progress.remaining < 0 || !(progress.throughput >= 0) || !(progress.finished_s >= 0)) {
      throw std::invalid_argument("worker " + std::to_string(w) +
                                  " reports negative tasks, throughput or time");
    }
    if (progress.remaining == 0) {
      p.finish_s.push_back(progress.finished_s);
    } else if (progress.throughput > 0) {
      p.finish_s.push_back(now_s + static_cast<double>(progress.remaining) / progress.throughput);
    } else {
      p.finish_s.push_back(never);
    }
  }
  if (workers.empty()) return p;
  std::vector<double> sorted = p.finish_s;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = (sorted[(n - 1) / 2] + sorted[n / 2]) / 2;
  const double earliest = sorted.front();
  if (earliest == never) return p;  // nothing measured yet: nobody to judge
  for (size_t w = 0; w < n; ++w) {
    if (p.finish_s[w] < median) p.pioneers.push_back(static_cast<int>(w));
    if (p.finish_s[w] > (1 + options.delta) * earliest) p.stragglers.push_back(static_cast<int>(w));
  }
  // Earliest pioneers and latest stragglers first; ties keep index order.
  std::stable_sort(p.pioneers.begin(), p.pioneers.end(),
                   [&](int a, int b) { return p.finish_s[a] < p.finish_s[b]; });
  std::stable_sort(p.stragglers.begin(), p.stragglers.end(),
                   [&](int a, int b) { return p.finish_s[a] > p.finish_s[b]; });
  return p;
}

int ChooseVictim(const Projection& projection, const std::vector<int64_t>& unstarted,
                 double pioneer_done_s) {
  for (int w : projection.stragglers) {  // latest first
    if (static_cast<size_t>(w) < unstarted.size() && unstarted[w] > 0) {
      return projection.finish_s[w] > pioneer_done_s ? w : -1;
    }
  }
  return -1;
}

}  // namespace straggler
}  // namespace pacer
