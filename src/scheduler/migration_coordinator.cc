#include "scheduler/migration_coordinator.h"

#include <chrono>
#include <mutex>
#include <string>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

MigrationCoordinator::MigrationCoordinator(Node& node, int app_id)
    : node_(node),
      app_id_(app_id),
      channel_(node.cluster(), node.dispatcher(), node.config().timeout_s) {
  if (node.role() != Role::kScheduler) {
    throw Error(StrCat("rank ", node.rank(), " is a ", RoleName(node.role()),
                       ": only the scheduler moves key ranges"));
  }
}

int MigrationCoordinator::num_ranges() const { return node_.routing().current()->num_ranges(); }
int MigrationCoordinator::num_servers() const { return node_.roles().num_servers(); }

int MigrationCoordinator::OwnerOf(int range) const {
  const std::shared_ptr<const Router> table = node_.routing().current();
  if (range < 0 || range >= table->num_ranges()) {
    throw Error(StrCat("range ", range, " does not exist: the table has ranges 0..",
                       table->num_ranges() - 1));
  }
  return table->ranges()[range].server;
}

int MigrationCoordinator::RangeOf(Key key) const { return node_.routing().current()->RangeOf(key); }

void MigrationCoordinator::Broadcast(const Router& table) {
  Message update;
  update.meta.set_command(proto::ROUTING_UPDATE);
  update.meta.set_sender(node_.rank());
  update.meta.set_routing(table.Encode());
  for (int rank = 1; rank < node_.roles().size(); ++rank) {
    node_.transport().Send(rank, update, nullptr);
  }
}

MigrationControl::Move MigrationCoordinator::MoveRange(int range, int to) {
  std::lock_guard<std::mutex> control(node_.control_mutex());
  Router next = *node_.routing().current();
  const int from = OwnerOf(range);
  if (to == from) throw Error(StrCat("range ", range, " belongs to server ", to, " already"));
  next.Move(range, to);  // throws for a server that does not exist
  const int64_t request_id = channel_.Begin(1);
  Message order = channel_.Request(proto::MIGRATE, node_.rank(), app_id_, request_id);
  order.meta.set_range(range);
  order.meta.set_target(to);
  order.meta.set_routing(next.Encode());
  const auto start = std::chrono::steady_clock::now();
  node_.transport().Send(node_.roles().ServerRank(from), order, nullptr);
  const proto::Meta answer =
      channel_.Wait(StrCat("moving range ", range, " from server ", from, " to server ", to))[0];
  if (!answer.error().empty()) throw Error(answer.error());
  const MigrationControl::Move move{
      range,
      from,
      to,
      next.epoch(),
      answer.moved_bytes(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  node_.routing().Install(next);
  Broadcast(next);
  return move;
}

}  // namespace pacer
