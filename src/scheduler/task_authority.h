#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "ps/node/node.h"
#include "straggler/task_ledger.h"
#include "straggler/task_projection.h"

namespace pacer {

// The scheduler's grant of tasks under --sync=epsp:S (Falcon, STRAGGLERS.md section 4): the one
// authority over each iteration's tasks, answering the workers' TASK requests on the receiving
// thread, one at a time, so each task is granted once: none is computed twice or lost.
//
// Elastic parallelism: when the first worker asks for an iteration, the authority shares its
// tasks (workers x tasks per worker) in proportion to each worker's capacity, the inverse of the
// median of its last 3 x tasks_per_worker task durations (so a one-off slow iteration does not
// shift the shares), within one task and the node's limit per worker.
//
// Task transfer: a worker gets its own tasks in order; once it has none left, a task not yet
// started of the straggler with the latest projected finish (its tasks left over the speed of its
// last task); once there is none to take, nothing, and it pushes what it computed. A worker may
// ask for its next own task ahead (prefetch, so the round trip hides behind its compute), except a
// straggler, whose tasks stay for the pioneers. Under slack
// synchronization (S > 0) a pioneer also takes tasks of earlier iterations from workers still in
// them, so they catch up. Iterations are numbered as GradientSync's clock; an iteration is
// forgotten once it and every one before it had all their tasks done.
class TaskAuthority {
 public:
  explicit TaskAuthority(Node& node);  // on the scheduler
  ~TaskAuthority();
  TaskAuthority(const TaskAuthority&) = delete;
  TaskAuthority& operator=(const TaskAuthority&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  struct Iteration {
    Iteration(const std::vector<int64_t>& shares, int64_t tasks_per_worker, int64_t task_limit)
        : ledger(straggler::TaskLedger::InShares(shares)),
          tasks_per_worker(tasks_per_worker),
          task_limit(task_limit) {}
    straggler::TaskLedger ledger;
    const int64_t tasks_per_worker, task_limit;
    const Clock::time_point start = Clock::now();
  };
  struct Answer {
    std::optional<straggler::TaskLedger::Grant> grant;
    int64_t grant_clock = 0;  // the iteration of the granted task
    int64_t share = 0;        // the asker's share of the iteration it asked about
    bool deferred = false;    // a prefetch not granted
  };

  void OnRequest(Message&& msg);
  // Throws std::invalid_argument for a bad request.
  Answer Serve(int worker, const proto::Meta& request);
  void RecordDone(int worker, const proto::Meta& request);
  Iteration& Open(int worker, const proto::Meta& request);
  // A straggler's task for `pioneer`, in iteration `clock` or (slack synchronization) before.
  std::optional<straggler::TaskLedger::Grant> Steal(int pioneer, int64_t clock,
                                                    int64_t* grant_clock);
  // The worker `pioneer` takes from in iteration `clock`, or -1: the straggler with the latest
  // projected finish; with `behind` (an iteration before the pioneer's), whoever of those with
  // tasks left finishes last, straggler or not. None that the pioneer, at its speed, would make
  // finish later.
  int Victim(int64_t clock, bool behind, int pioneer) const;
  // Every worker's projected finish of iteration `clock` (its tasks left there and before, at the
  // speed of its last task); `unstarted`, if set, receives each one's tasks not started there,
  // `now`, if set, the time since the iteration opened.
  straggler::Projection Project(int64_t clock, std::vector<int64_t>* unstarted, double* now) const;
  // Tasks per second: `worker`'s capacity (over its last tasks), and its current speed (its last
  // task); 0 before it finished one.
  double Capacity(int worker) const;
  double Speed(int worker) const;

  // Records that `worker` asked for `clock`; forgets the iterations every worker is done with.
  void Forget(int worker, int64_t clock);

  static constexpr int64_t kMaxTasksPerWorker = 1 << 16;

  Node& node_;
  const int staleness_;  // the job's EPSP bound
  int app_id_ = -1;      // the GradientSync using tasks: the first to ask
  std::mutex mu_;
  std::map<int64_t, Iteration> iterations_;
  int64_t complete_below_ = 0;  // every iteration before it had all its tasks done
  bool started_ = false;        // the first request sets the first clock
  std::vector<int64_t> asked_;  // per worker: the latest clock it asked for (excluded: the most)
  std::vector<std::deque<double>> task_seconds_;  // per worker: its last tasks' durations
  std::shared_ptr<void> exclusions_;
};

}  // namespace pacer
