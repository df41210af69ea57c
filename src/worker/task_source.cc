#include "worker/task_source.h"

#include "common/str_cat.h"
#include "pacer/error.h"
#include "pacer/sync_mode.h"

namespace pacer {

TaskSource::TaskSource(Node& node, int app_id, int64_t tasks_per_worker, int64_t task_limit)
    : node_(node),
      tasks_per_worker_(tasks_per_worker),
      task_limit_(task_limit == 0 ? 2 * tasks_per_worker : task_limit) {
  if (tasks_per_worker <= 0 || task_limit_ < tasks_per_worker) {
    throw Error(StrCat("UseTasks(", tasks_per_worker, ", ", task_limit,
                       "): expected at least one task per worker and a limit of at least as "
                       "many (0: twice as many)"));
  }
  if (SyncMode::Starting(node.config().sync).kind == SyncMode::Kind::kEpsp) {
    client_ = std::make_unique<TaskClient>(node, app_id);
  }
}

void TaskSource::Begin(int64_t clock, IterationPlan&) {
  // A prefetch for another clock: an iteration left before its tasks were done (after an error).
  // Its answer is dropped (the channel ignores late answers); the authority forgets a task it
  // granted once every worker is past it.
  if (prefetching_ && prefetch_clock_ != clock) prefetching_ = false;
  clock_ = clock;
  previous_.reset();
  exhausted_ = false;
  computed_ = transferred_ = 0;
  share_ = client_ ? 0 : tasks_per_worker_;
  wait_s_ = 0;
}

void TaskSource::End(IterationReport& report) {
  report.tasks = computed_;
  report.tasks_transferred = transferred_;
  report.task_share = share_;
  report.task_wait_s = wait_s_;
}

std::optional<Task> TaskSource::Next(double previous_s) {
  if (exhausted_) return std::nullopt;
  std::optional<Task> task;
  if (client_) {
    task = Granted(previous_s);
  } else if (computed_ < tasks_per_worker_) {
    const int me = node_.cluster().role_index();
    task = Task{clock_, me * tasks_per_worker_ + computed_, me};
  }
  previous_ = task;
  if (!task) {
    exhausted_ = true;
    return std::nullopt;
  }
  ++computed_;
  if (task->owner != node_.cluster().role_index()) ++transferred_;
  return task;
}

// The task prefetched while the previous one was computed (or, for the first, while the previous
// iteration synchronized); else (a deferred prefetch) one asked for now. Then the one after is
// prefetched, reporting the previous one done unless the request now did; after the last, the
// first of the next iteration.
std::optional<Task> TaskSource::Granted(double previous_s) {
  std::optional<TaskClient::Done> done;
  if (previous_) done = TaskClient::Done{previous_->clock, previous_->id, previous_s};
  const auto start = std::chrono::steady_clock::now();
  const bool first = !previous_;
  TaskClient::Answer answer;
  if (prefetching_) {
    prefetching_ = false;
    answer = client_->Receive();
    if (first) share_ = answer.share;
  }
  if (!answer.task) {
    answer = client_->Next(clock_, tasks_per_worker_, task_limit_, done);
    done.reset();
    if (first) share_ = answer.share;
  }
  // A pioneer with a straggler's task asks again once done: a prefetch would be deferred.
  const bool own = answer.task && answer.task->owner == node_.cluster().role_index();
  if (own || !answer.task) {
    prefetch_clock_ = own ? clock_ : clock_ + 1;
    client_->Send(prefetch_clock_, tasks_per_worker_, task_limit_, done, /*prefetch=*/true);
    prefetching_ = true;
  }
  wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return answer.task;
}

}  // namespace pacer
