#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "pacer/task.h"
#include "ps/node/node.h"
#include "worker/iteration_part.h"
#include "worker/task_client.h"

namespace pacer {

// Where GradientSync's tasks come from. Under --sync=epsp:S the scheduler's task authority grants
// them (a pioneer gets a straggler's; shares follow capacity); otherwise a worker computes its own
// share, w x tasks_per_worker and on, in order, with no round trips. Under epsp the next task is
// asked for while the current one is computed, so the round trip hides behind the compute.
class TaskSource : public IterationPart {
 public:
  // `task_limit`: the most tasks one worker gets (its node's limit); 0: twice tasks_per_worker.
  TaskSource(Node& node, int app_id, int64_t tasks_per_worker, int64_t task_limit);

  void Begin(int64_t clock, IterationPlan& plan) override;
  // The report counts the tasks computed, transferred and owned, and the wait for grants.
  void End(IterationReport& report) override;
  // The next task for this worker in the iteration begun, or none when nothing is left for it.
  // `previous_s`: how long the previous task took (ignored for the first).
  std::optional<Task> Next(double previous_s);

  bool exhausted() const { return exhausted_; }
  int64_t tasks_per_worker() const { return tasks_per_worker_; }
  int64_t computed() const { return computed_; }        // tasks granted this iteration
  int64_t transferred() const { return transferred_; }  // of those, other workers' tasks
  int64_t share() const { return share_; }              // this worker's own tasks
  double wait_s() const { return wait_s_; }             // waiting for grants

 private:
  std::optional<Task> Granted(double previous_s);

  Node& node_;
  const int64_t tasks_per_worker_, task_limit_;
  std::unique_ptr<TaskClient> client_;  // under epsp
  int64_t clock_ = 0;
  std::optional<Task> previous_;
  bool exhausted_ = false;
  bool prefetching_ = false;  // a request for the next task is in flight
  int64_t prefetch_clock_ = 0;
  int64_t computed_ = 0, transferred_ = 0, share_ = 0;
  double wait_s_ = 0;
};

}  // namespace pacer
