#pragma once

#include <cstdint>
#include <optional>

#include "pacer/task.h"
#include "ps/control_channel.h"
#include "ps/session_core.h"

namespace pacer {

// A worker's requests to the scheduler's task authority (Falcon's task transfer, STRAGGLERS.md
// section 4): one round trip per task, reporting the last one done and getting the next.
class TaskClient {
 public:
  explicit TaskClient(SessionCore& session);  // on a worker

  struct Done {
    int64_t clock;
    int64_t id;
    double seconds;  // how long it took to compute
  };
  struct Answer {
    std::optional<Task> task;  // none: nothing left to take
    int64_t share = 0;         // this worker's share of the iteration it asked about
  };
  // The next task for this worker in iteration `clock`: its own, or a straggler's once its own
  // are all granted. `tasks_per_worker`: the mean share; `task_limit`: the most one worker gets.
  // Throws Error for a refused request, TimeoutError after timeout_s.
  Answer Next(int64_t clock, int64_t tasks_per_worker, int64_t task_limit,
              const std::optional<Done>& done);

 private:
  SessionCore& session_;
  ControlChannel channel_;
};

}  // namespace pacer
