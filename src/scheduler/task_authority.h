#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "ps/session_core.h"
#include "straggler/task_ledger.h"

namespace pacer {

// The scheduler's grant of tasks (Falcon's task transfer, STRAGGLERS.md section 4): the one
// authority over each iteration's tasks, answering the workers' TASK requests on the receiving
// thread, one at a time. A worker gets its own tasks in order; once it has none left, a task not
// yet started of the straggler with the latest projected finish (from the task throughput the
// authority itself measures between grants and reports); once there is none to take, nothing,
// and it pushes what it computed. Each task is granted once: none is computed twice or lost.
// Iterations are numbered 0, 1, 2, ... as GradientSync's clock; an iteration is forgotten once it
// and every one before it had all their tasks done.
class TaskAuthority {
 public:
  explicit TaskAuthority(SessionCore& session);  // on the scheduler
  ~TaskAuthority();
  TaskAuthority(const TaskAuthority&) = delete;
  TaskAuthority& operator=(const TaskAuthority&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  struct Iteration {
    Iteration(int workers, int64_t tasks_per_worker)
        : ledger(straggler::TaskLedger::InBlocks(workers, tasks_per_worker)),
          tasks_per_worker(tasks_per_worker),
          last_finished_s(workers, 0) {}
    straggler::TaskLedger ledger;
    const int64_t tasks_per_worker;
    const Clock::time_point start = Clock::now();
    std::vector<double> last_finished_s;  // per worker: when it last finished a task
  };

  void OnRequest(Message&& msg);
  // The grant for `worker`, or none; throws std::invalid_argument for a bad report.
  std::optional<straggler::TaskLedger::Grant> Grant(Iteration& it, int worker,
                                                    const proto::Meta& request);
  // `now_s`: since the iteration began.
  static int Victim(const Iteration& it, double now_s);

  SessionCore& session_;
  std::mutex mu_;
  std::map<int64_t, Iteration> iterations_;
  int64_t complete_below_ = 0;  // every iteration before it had all its tasks done
};

}  // namespace pacer
