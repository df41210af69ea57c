#include "scheduler/sms_orders.h"

#include <glog/logging.h>

#include <sstream>
#include <stdexcept>

#include "common/str_cat.h"

namespace pacer {
namespace {

straggler::SmsOptions OptionsOf(const Config& c) {
  straggler::SmsOptions o;
  o.margin = c.shrink_margin;
  o.floor_s = c.straggler_floor_ms / 1e3;
  return o;
}

}  // namespace

SmsOrders::SmsOrders(Node& node, MetricsLog& metrics, const StragglerWatch& watch,
                     const AllowedBatches& allowed, BatchOwner& owner)
    : node_(node),
      metrics_(metrics),
      watch_(watch),
      allowed_(allowed),
      owner_(owner),
      orders_(node),
      policy_(OptionsOf(node.config())),
      told_(node.roles().num_workers(), false),
      excluded_(node.roles().num_workers(), false) {}

SmsOrders::~SmsOrders() { Stop(); }

void SmsOrders::Stop() {
  orders_.Cancel();
  queue_.Stop();
}

void SmsOrders::OnExclusion(int index) {
  excluded_[index] = true;
  policy_.Forget(index);
}

void SmsOrders::OnIteration(int index, int rank, const IterationReport& r) {
  if (excluded_[index]) return;  // a report that was under way when it was lost
  if (!told_[index]) {
    const std::vector<int> sizes = allowed_.Of(index);
    if (sizes.empty()) return;  // nothing to shrink to yet
    try {
      policy_.Allow(index, sizes);
    } catch (const std::invalid_argument& e) {
      LOG(WARNING) << "SMS leaves worker " << index << " (rank " << rank << ") alone: " << e.what();
    }
    told_[index] = true;
  }
  policy_.Observe(index, r.compute_s, static_cast<int>(r.batch_size));
}

void SmsOrders::OnBoundary(int64_t iteration) {
  policy_.SetSlowLinks(watch_.FlaggedWorkers({straggler::Detection::Kind::kCommunication}));
  if (!owner_.MayShrink()) return;  // STRN profiles, or STRET tuned the sizes
  std::vector<straggler::SmsShrink> shrinks = policy_.Decide();
  if (shrinks.empty()) return;
  queue_.Post([this, iteration, shrinks = std::move(shrinks)] { Execute(iteration, shrinks); });
}

void SmsOrders::Execute(int64_t iteration, const std::vector<straggler::SmsShrink>& shrinks) {
  std::vector<straggler::TunedBatch> batches;
  std::ostringstream detail;
  for (const straggler::SmsShrink& s : shrinks) {
    batches.push_back({s.worker, s.batch, s.weight, s.skip});
    detail << (detail.tellp() > 0 ? ", " : "") << "worker " << s.worker << " " << s.batch
           << (s.skip ? " skipping" : "") << (s.slow_link ? " (a slow link)" : "") << " (predicted "
           << s.predicted_s * 1e3 << " ms, median " << s.median_s * 1e3 << " ms)";
  }
  const char* action = "order";
  std::string why;
  try {
    orders_.TuneBatches(batches, 1.0);  // weights are the samples over a full batch's
    LOG(INFO) << "iteration " << iteration << ": SMS batches: " << detail.str();
  } catch (const std::exception& e) {
    LOG(WARNING) << "iteration " << iteration << ": SMS batches " << detail.str()
                 << " failed: " << e.what();
    action = "failed";
    why = e.what();
  }
  for (const straggler::SmsShrink& s : shrinks) {
    metrics_.Sms(iteration, node_.cluster().SecondsSinceStart(), node_.roles().WorkerRank(s.worker),
                 s, action, why);
  }
}

}  // namespace pacer
