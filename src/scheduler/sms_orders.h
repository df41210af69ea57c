#pragma once

#include <cstdint>
#include <vector>

#include "ps/node/node.h"
#include "scheduler/allowed_batches.h"
#include "scheduler/batch_owner.h"
#include "scheduler/metrics_log.h"
#include "scheduler/order_queue.h"
#include "scheduler/relay_orders.h"
#include "scheduler/straggler_watch.h"
#include "scheduler/telemetry_intake.h"
#include "straggler/sms_policy.h"

namespace pacer {

// The scheduler's side of SMS's batch shrink (--predicted_policy=sms, STRAGGLERS.md section 5):
// it feeds SmsPolicy each worker's measured compute per batch, the sizes the application allows
// (GradientSync::AllowBatchSizes) and the watch's communication stragglers (who skip unchanged
// gradients), and at every iteration boundary sends the policy's orders, the
// same batch orders STRET's tuning sends, on a thread of its own since each waits for the
// workers' answers. Every order, and how it went, goes to the log and the metrics log.
class SmsOrders : public TelemetryObserver {
 public:
  static bool Wanted(const Node& node) { return node.config().predicted_policy == "sms"; }

  SmsOrders(Node& node, MetricsLog& metrics, const StragglerWatch& watch,
            const AllowedBatches& allowed, BatchOwner& owner);
  ~SmsOrders() override;

  void OnIteration(int index, int rank, const IterationReport& report) override;
  void OnBoundary(int64_t iteration) override;
  // A lost worker gets no order, and leaves the median.
  void OnExclusion(int index) override;
  // Orders nothing more; an order under way ends with an Error.
  void Stop();

 private:
  void Execute(int64_t iteration, const std::vector<straggler::SmsShrink>& shrinks);

  Node& node_;
  MetricsLog& metrics_;
  const StragglerWatch& watch_;
  const AllowedBatches& allowed_;
  BatchOwner& owner_;
  RelayOrders orders_;
  straggler::SmsPolicy policy_;  // the intake's thread only
  std::vector<bool> told_;       // per worker: its sizes are in the policy
  std::vector<bool> excluded_;   // per worker: the job went on without it
  OrderQueue queue_;             // last: its thread runs orders that use the rest
};

}  // namespace pacer
