#pragma once

#include <memory>

#include "ps/node/node.h"
#include "scheduler/allowed_batches.h"
#include "scheduler/batch_owner.h"
#include "scheduler/metrics_log.h"
#include "scheduler/migration_orders.h"
#include "scheduler/sms_orders.h"
#include "scheduler/straggler_watch.h"
#include "scheduler/stret_orders.h"
#include "scheduler/sync_orders.h"
#include "scheduler/task_authority.h"
#include "scheduler/telemetry_intake.h"

namespace pacer {

// What the scheduler runs beside its node: the metrics log, the straggler watch over the job's
// telemetry, the orders that move key ranges (SAS, --migrate_every), STRET's relays
// (--comm_policy=stret), SMS's batch shrink (--predicted_policy=sms), STRN's choice of the sync
// mode (--sync=auto) and the task authority of
// EPSP, put together here so that none of those layers knows the others.
class SchedulerServices : public NodePart {
 public:
  explicit SchedulerServices(Node& node);

  void Stop() override;

 private:
  MetricsLog metrics_;
  StragglerWatch watch_;
  AllowedBatches allowed_batches_;                     // what the batch orders choose from
  BatchOwner batch_owner_;                             // which policy may order them now
  std::unique_ptr<MigrationOrders> migration_orders_;  // where the job moves ranges
  std::unique_ptr<StretOrders> stret_orders_;          // where it relays slow links
  std::unique_ptr<SmsOrders> sms_orders_;              // where it shrinks predicted stragglers
  std::unique_ptr<SyncOrders> sync_orders_;            // which sync mode it runs (--sync=auto)
  TaskAuthority task_authority_;
  std::unique_ptr<TelemetryIntake> intake_;  // it stops feeding the others first
  std::shared_ptr<void> exclusions_;         // last: a worker lost, in the metrics log
};

}  // namespace pacer
