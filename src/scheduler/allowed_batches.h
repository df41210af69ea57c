#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "ps/node/node.h"

namespace pacer {

// The batch sizes each worker told it can run (GradientSync::AllowBatchSizes, BATCH_SIZES), which
// the scheduler's batch policies (STRET's tuning, SMS's shrink) choose from. Thread-safe.
class AllowedBatches {
 public:
  explicit AllowedBatches(Node& node);
  ~AllowedBatches();
  AllowedBatches(const AllowedBatches&) = delete;
  AllowedBatches& operator=(const AllowedBatches&) = delete;

  // Worker `index`'s sizes as told, empty if not (yet).
  std::vector<int> Of(int index) const;
  // The sizes every worker can run, in worker 0's order. Throws Error naming a worker that has
  // not told its sizes.
  std::vector<int> Common() const;

 private:
  void OnSizes(Message&& msg);

  Node& node_;
  mutable std::mutex mu_;
  std::map<int, std::vector<int>> sizes_;  // by worker index
};

}  // namespace pacer
