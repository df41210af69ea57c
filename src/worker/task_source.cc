#include "worker/task_source.h"

#include "pacer/error.h"
#include "pacer/sync_mode.h"
#include "ps/str_cat.h"

namespace pacer {

TaskSource::TaskSource(SessionCore& session, int64_t tasks_per_worker, int64_t task_limit)
    : session_(session),
      tasks_per_worker_(tasks_per_worker),
      task_limit_(task_limit == 0 ? 2 * tasks_per_worker : task_limit) {
  if (tasks_per_worker <= 0 || task_limit_ < tasks_per_worker) {
    throw Error(StrCat("UseTasks(", tasks_per_worker, ", ", task_limit,
                       "): expected at least one task per worker and a limit of at least as "
                       "many (0: twice as many)"));
  }
  if (SyncMode::Parse(session.config().sync).kind == SyncMode::Kind::kEpsp) {
    client_ = std::make_unique<TaskClient>(session);
  }
}

void TaskSource::Begin(int64_t clock) {
  clock_ = clock;
  previous_.reset();
  exhausted_ = false;
  computed_ = transferred_ = 0;
  share_ = client_ ? 0 : tasks_per_worker_;
  wait_s_ = 0;
}

std::optional<Task> TaskSource::Next(double previous_s) {
  if (exhausted_) return std::nullopt;
  std::optional<Task> task;
  if (client_) {
    std::optional<TaskClient::Done> done;
    if (previous_) done = TaskClient::Done{previous_->clock, previous_->id, previous_s};
    const auto start = std::chrono::steady_clock::now();
    const TaskClient::Answer answer = client_->Next(clock_, tasks_per_worker_, task_limit_, done);
    wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!previous_) share_ = answer.share;
    task = answer.task;
  } else if (computed_ < tasks_per_worker_) {
    const int me = session_.role_index();
    task = Task{clock_, me * tasks_per_worker_ + computed_, me};
  }
  previous_ = task;
  if (!task) {
    exhausted_ = true;
    return std::nullopt;
  }
  ++computed_;
  if (task->owner != session_.role_index()) ++transferred_;
  return task;
}

}  // namespace pacer
