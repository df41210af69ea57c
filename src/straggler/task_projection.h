#pragma once

#include <cstdint>
#include <vector>

namespace pacer {
namespace straggler {

// Falcon's straggler projection (STRAGGLERS.md section 4), as pure logic: from each worker's
// measured task throughput and the tasks it has left, when it will finish the iteration; who is
// a pioneer (ahead of the median) and who a straggler (behind the earliest by more than delta).
struct WorkerProgress {
  int64_t remaining = 0;  // tasks it has yet to finish (running or not started, its own or taken)
  double throughput = 0;  // tasks per second, measured; 0: none finished yet
  double finished_s = 0;  // when it finished its tasks (remaining == 0), since the iteration began
};

struct ProjectionOptions {
  double delta = 0.2;  // a straggler finishes after (1 + delta) x the earliest projected finish
};

struct Projection {
  std::vector<double> finish_s;  // per worker, since the iteration began; infinity: unknown
  std::vector<int> pioneers;     // projected to finish before the median, earliest first
  std::vector<int>
      stragglers;  // projected to finish after (1 + delta) x the earliest, latest first
};

// `now_s`: time since the iteration began. A worker with tasks left and no throughput yet is
// projected to finish never (infinity): a straggler, unless every worker is in that state.
// Throws std::invalid_argument for negative tasks, throughputs or times.
Projection Project(const std::vector<WorkerProgress>& workers, double now_s,
                   const ProjectionOptions& options = {});

// The worker a pioneer takes tasks from: the straggler with the latest projected finish among
// those with tasks not started (`unstarted`, per worker); -1 when there is none, or when the
// pioneer would finish one more task (at `pioneer_done_s`, since the iteration began) no sooner
// than that straggler finishes all of its own: taking it would make the iteration longer.
int ChooseVictim(const Projection& projection, const std::vector<int64_t>& unstarted,
                 double pioneer_done_s = 0);

}  // namespace straggler
}  // namespace pacer
