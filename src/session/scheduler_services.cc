#include "session/scheduler_services.h"

#include <vector>

namespace pacer {

SchedulerServices::SchedulerServices(Node& node)
    : metrics_(node.config().metrics),
      watch_(node, metrics_),
      allowed_batches_(node),
      batch_owner_(SyncOrders::Wanted(node)),
      task_authority_(node) {
  metrics_.Job(node.config(), node.roles().num_workers(), node.roles().num_servers());
  std::vector<TelemetryObserver*> observers = {&metrics_, &watch_};
  if (MigrationOrders::Wanted(node)) {
    migration_orders_ = std::make_unique<MigrationOrders>(node, metrics_);
    observers.push_back(migration_orders_.get());
  }
  if (StretOrders::Wanted(node)) {
    stret_orders_ =
        std::make_unique<StretOrders>(node, metrics_, watch_, allowed_batches_, batch_owner_);
    observers.push_back(stret_orders_.get());  // after the watch: it reads the watch's flags
  }
  if (SmsOrders::Wanted(node)) {
    sms_orders_ =
        std::make_unique<SmsOrders>(node, metrics_, watch_, allowed_batches_, batch_owner_);
    observers.push_back(sms_orders_.get());  // after the watch: it reads the watch's flags
  }
  if (SyncOrders::Wanted(node)) {
    sync_orders_ =
        std::make_unique<SyncOrders>(node, metrics_, watch_, allowed_batches_, batch_owner_);
    observers.push_back(sync_orders_.get());  // after the watch: it reads the watch's flags
  }
  intake_ = std::make_unique<TelemetryIntake>(node, std::move(observers));
  exclusions_ = node.cluster().WatchExclusions([this, &node](int rank, const std::string& why) {
    metrics_.Exclusion(node.cluster().SecondsSinceStart(), rank, node.roles().IndexOf(rank), why);
  });
}

void SchedulerServices::Stop() {
  if (migration_orders_) migration_orders_->Stop();
  if (stret_orders_) stret_orders_->Stop();
  if (sms_orders_) sms_orders_->Stop();
  if (sync_orders_) sync_orders_->Stop();
}

}  // namespace pacer
