#pragma once

#include <mutex>
#include <vector>

#include "ps/cluster/control_channel.h"
#include "worker/iteration_part.h"

namespace pacer {

class Node;

// The worker's side of the scheduler's batch orders, STRET's one-time tuning and SMS's shrink
// (STRAGGLERS.md sections 6 and 5): it tells the
// scheduler which batch sizes the application can run (BATCH_SIZES), and takes the scheduler's
// order (BATCH_ORDER) of the size to run and the weight of its gradients, which hold from the
// next iteration on so that an iteration's batch and weight agree.
class BatchOrders : public IterationPart {
 public:
  explicit BatchOrders(Node& node);
  ~BatchOrders();
  BatchOrders(const BatchOrders&) = delete;
  BatchOrders& operator=(const BatchOrders&) = delete;

  // Throws Error for an empty list or a size that is not positive.
  void Allow(const std::vector<int>& sizes);

  // What this iteration runs: the size and weight last ordered (0 and 1 before any order), and
  // whether it skips unchanged gradients (SMS's skip).
  struct Order {
    int batch_size = 0;
    double weight = 1;
    bool skip_unchanged = false;
  };
  // At the start of an iteration: takes the last order, its weight and skip into `plan`.
  void Begin(int64_t clock, IterationPlan& plan) override;
  void End(IterationReport&) override {}
  const Order& current() const { return current_; }

 private:
  void OnOrder(Message&& msg);

  Node& node_;
  std::mutex mu_;
  Order ordered_;  // as the scheduler last said
  Order current_;  // this iteration's (the application's thread only)
};

}  // namespace pacer
