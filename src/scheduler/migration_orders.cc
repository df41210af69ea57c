#include "scheduler/migration_orders.h"

#include <glog/logging.h>

#include <algorithm>
#include <vector>

namespace pacer {
namespace {

bool Balances(const Node& node) {
  return node.config().balance == "sas" && node.roles().num_servers() > 1;
}

}  // namespace

bool MigrationOrders::Wanted(const Node& node) {
  return node.roles().num_servers() > 1 && (node.config().migrate_every > 0 || Balances(node));
}

MigrationOrders::MigrationOrders(Node& node, MetricsLog& metrics)
    : node_(node), metrics_(metrics), rng_(static_cast<uint64_t>(node.config().inject_seed)) {
  if (Balances(node)) {
    balancer_ = std::make_unique<SasBalancer>(node.roles().num_servers(),
                                              node.routing().current()->num_ranges(),
                                              node.settings().server_bandwidth);
  }
  mover_ = std::make_unique<RangeMover>(
      node, [this](const RangeMover::Order& order, const MigrationControl::Move& move) {
        Moved(order, move);
      });
}

MigrationOrders::~MigrationOrders() { Stop(); }

void MigrationOrders::Stop() {
  std::unique_ptr<RangeMover> mover;
  {
    std::lock_guard<std::mutex> lock(mu_);
    mover = std::move(mover_);
  }
  mover.reset();  // outside the lock: a finishing move logs under it
}

void MigrationOrders::OnServerReport(int index, int rank, const ServerReport& r) {
  std::lock_guard<std::mutex> lock(mu_);
  server_keys_[index] = r.keys;
  if (balancer_ && !balancer_->Observe(index, r)) {
    LOG(WARNING) << "server " << index << " (rank " << rank << ") reported the bytes of "
                 << r.range_bytes.size() << " key ranges, but the table has "
                 << node_.routing().current()->num_ranges() << ": SAS ignores the report";
  }
}

void MigrationOrders::OnBoundary(int64_t iteration) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!mover_) return;
  const int every = node_.config().migrate_every;
  if (every > 0 && (iteration + 1) % every == 0) MoveRandomRange(iteration);
  if (balancer_) Balance(iteration);
}

void MigrationOrders::MoveRandomRange(int64_t iteration) {
  int64_t keys = 0;
  for (const auto& entry : server_keys_) keys += entry.second;
  // GradientSync numbers its keys 0, 1, 2, ...: a random one of them has a range worth moving.
  const int range =
      mover_->control().RangeOf(rng_() % static_cast<uint64_t>(std::max<int64_t>(1, keys)));
  const int servers = node_.roles().num_servers();
  const int from = mover_->control().OwnerOf(range);
  const int to =
      (from + 1 + static_cast<int>(rng_() % static_cast<uint64_t>(servers - 1))) % servers;
  mover_->Request({"migrate_every", iteration, range, to});
}

void MigrationOrders::Balance(int64_t iteration) {
  std::vector<int> owners;
  for (int range = 0; range < mover_->control().num_ranges(); ++range) {
    owners.push_back(mover_->control().OwnerOf(range));
  }
  const straggler::SasDecision decision = balancer_->Decide(owners);
  if (decision.moves.empty() || !mover_->idle()) return;  // the last plan is still under way
  LOG(INFO) << "iteration " << iteration << ": SAS plans " << decision.moves.size()
            << " range moves, slowest server at " << decision.imbalance << "x the ideal, then "
            << decision.planned << "x";
  metrics_.Plan(iteration, node_.cluster().SecondsSinceStart(), decision);
  for (const straggler::RangeMove& m : decision.moves) {
    mover_->Request({"sas", iteration, m.range, m.to});
  }
}

void MigrationOrders::Moved(const RangeMover::Order& order, const MigrationControl::Move& move) {
  std::lock_guard<std::mutex> lock(mu_);
  LOG(INFO) << "iteration " << order.iteration << ": moved range " << move.range << " from server "
            << move.from << " to server " << move.to << " (epoch " << move.epoch << ", "
            << move.bytes << " bytes, " << move.pause_s * 1e3 << " ms)";
  metrics_.Migration(order.policy, order.iteration, node_.cluster().SecondsSinceStart(), move);
}

}  // namespace pacer
