#pragma once

#include <cstdint>
#include <optional>

#include "ps/control_channel.h"
#include "ps/session_core.h"

namespace pacer {

// A worker's requests to the scheduler's task authority (Falcon's task transfer, STRAGGLERS.md
// section 4): one round trip per task, reporting the last one done and getting the next.
class TaskClient {
 public:
  explicit TaskClient(SessionCore& session);  // on a worker

  struct Task {
    int64_t id;  // within the iteration: worker w owns w * tasks_per_worker and on
    int owner;   // whose share it is: its gradient counts for this worker's
  };
  // The next task of iteration `iteration` for this worker: its own, or a straggler's once its
  // own are all granted; none when there is nothing left to take. `done`: the task this worker
  // finished since its last call, if any. Throws Error for a refused request, TimeoutError after
  // timeout_s.
  std::optional<Task> Next(int64_t iteration, int64_t tasks_per_worker,
                           std::optional<int64_t> done);

 private:
  SessionCore& session_;
  ControlChannel channel_;
};

}  // namespace pacer
