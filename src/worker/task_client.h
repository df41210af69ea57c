#pragma once

#include <cstdint>
#include <optional>

#include "pacer/task.h"
#include "ps/cluster/control_channel.h"
#include "ps/node/node.h"

namespace pacer {

// A worker's requests to the scheduler's task authority (Falcon's task transfer, STRAGGLERS.md
// section 4): one round trip per task, reporting the last one done and getting the next.
class TaskClient {
 public:
  // On a worker; `app_id`: the GradientSync's, whose tasks these are.
  explicit TaskClient(Node& node, int app_id = 0);

  struct Done {
    int64_t clock;
    int64_t id;
    double seconds;  // how long it took to compute
  };
  struct Answer {
    std::optional<Task> task;  // none: nothing left to take (or deferred)
    int64_t share = 0;         // this worker's share of the iteration it asked about
    bool deferred = false;     // a prefetch the authority did not grant: ask again once done
  };
  // Asks for the next task for this worker in iteration `clock`: its own, or a straggler's once
  // its own are all granted. `tasks_per_worker`: the mean share; `task_limit`: the most one worker
  // gets. With `prefetch`, only its own next task, while it computes the one before. One request
  // at a time: Receive its answer before the next Send.
  void Send(int64_t clock, int64_t tasks_per_worker, int64_t task_limit,
            const std::optional<Done>& done, bool prefetch);
  // Throws Error for a refused request, TimeoutError after timeout_s.
  Answer Receive();
  Answer Next(int64_t clock, int64_t tasks_per_worker, int64_t task_limit,
              const std::optional<Done>& done) {
    Send(clock, tasks_per_worker, task_limit, done, false);
    return Receive();
  }

 private:
  Node& node_;
  const int app_id_;
  ControlChannel channel_;
  int64_t clock_ = 0;  // of the request in flight
};

}  // namespace pacer
