#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "pacer/migration_control.h"
#include "ps/node/node.h"
#include "scheduler/migration_coordinator.h"

namespace pacer {

// Carries out the scheduler's range moves on a thread of its own: a move waits for the new
// owner's acknowledgement, which arrives on the transport's thread, the very thread on which
// reports (and so the policies that order moves) run. Moves run one at a time, in order; each
// outcome goes to `done` (a failed move is logged and skipped: the old placement stays).
class RangeMover {
 public:
  struct Order {
    const char* policy;  // that ordered it, for the log
    int64_t iteration;   // the boundary that decided it
    int range;
    int to;
  };
  using Done = std::function<void(const Order&, const MigrationControl::Move&)>;

  RangeMover(Node& node, Done done);
  ~RangeMover();
  RangeMover(const RangeMover&) = delete;
  RangeMover& operator=(const RangeMover&) = delete;

  void Request(const Order& order);
  // No move waits or runs.
  bool idle();
  // The placement the scheduler knows (moves finished so far).
  MigrationCoordinator& control() { return control_; }

 private:
  void Run();

  MigrationCoordinator control_;
  Done done_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<Order> orders_;
  bool moving_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace pacer
