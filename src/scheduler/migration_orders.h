#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "ps/node/node.h"
#include "scheduler/metrics_log.h"
#include "scheduler/range_mover.h"
#include "scheduler/sas_balancer.h"
#include "scheduler/telemetry_intake.h"

namespace pacer {

// The scheduler's orders to move key ranges at iteration boundaries: --balance=sas moves ranges
// off servers whose measured service makes them stragglers, and back when they recover (SAS,
// STRAGGLERS.md section 3); --migrate_every=K moves a random GradientSync key's range every K
// iterations, for testing. Moves run on a RangeMover's thread; each one, and each SAS plan, goes
// to the log and the metrics log.
class MigrationOrders : public TelemetryObserver {
 public:
  // Whether the job's configuration orders any move (a job of one server never does).
  static bool Wanted(const Node& node);

  MigrationOrders(Node& node, MetricsLog& metrics);
  ~MigrationOrders() override;

  void OnServerReport(int index, int rank, const ServerReport& report) override;
  void OnBoundary(int64_t iteration) override;
  // Orders no more moves and abandons the one in flight (after the job's last barrier its
  // acknowledgement may never come).
  void Stop();

 private:
  void MoveRandomRange(int64_t iteration);
  void Balance(int64_t iteration);
  void Moved(const RangeMover::Order& order, const MigrationControl::Move& move);

  Node& node_;
  MetricsLog& metrics_;
  std::mutex mu_;
  std::map<int, int64_t> server_keys_;  // per server: keys held, as last reported
  std::mt19937_64 rng_;
  std::unique_ptr<SasBalancer> balancer_;
  std::unique_ptr<RangeMover> mover_;  // last: its thread stops first
};

}  // namespace pacer
