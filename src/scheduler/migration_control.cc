#include "pacer/migration_control.h"

#include <chrono>
#include <mutex>
#include <string>

#include "pacer/error.h"
#include "ps/control_channel.h"
#include "ps/routing.h"
#include "ps/session_core.h"
#include "ps/str_cat.h"

namespace pacer {

struct MigrationControl::State {
  explicit State(SessionCore& s) : session(s), channel(s) {}

  void Broadcast(const Router& table) {
    Message update;
    update.meta.set_command(proto::ROUTING_UPDATE);
    update.meta.set_sender(session.rank());
    update.meta.set_routing(table.Encode());
    for (int rank = 1; rank < session.num_servers() + session.num_workers() + 1; ++rank) {
      session.transport().Send(rank, update, nullptr);
    }
  }

  SessionCore& session;
  ControlChannel channel;
  int app_id = 0;
};

MigrationControl::MigrationControl(Session& session, int app_id)
    : MigrationControl(session.core(), app_id) {}

MigrationControl::MigrationControl(SessionCore& session, int app_id)
    : state_(std::make_shared<State>(session)) {
  if (session.role() != Role::kScheduler) {
    throw Error(StrCat("rank ", session.rank(), " is a ", RoleName(session.role()),
                       ": only the scheduler moves key ranges"));
  }
  state_->app_id = app_id;
}

MigrationControl::~MigrationControl() = default;

int MigrationControl::num_ranges() const { return state_->session.routing()->num_ranges(); }
int MigrationControl::num_servers() const { return state_->session.num_servers(); }

int MigrationControl::OwnerOf(int range) const {
  const std::shared_ptr<const Router> table = state_->session.routing();
  if (range < 0 || range >= table->num_ranges()) {
    throw Error(StrCat("range ", range, " does not exist: the table has ranges 0..",
                       table->num_ranges() - 1));
  }
  return table->ranges()[range].server;
}

void MigrationControl::Cancel() { state_->channel.Cancel(); }

int MigrationControl::RangeOf(Key key) const { return state_->session.routing()->RangeOf(key); }

MigrationControl::Move MigrationControl::MoveRange(int range, int to) {
  State& s = *state_;
  std::lock_guard<std::mutex> control(s.session.control_mutex());
  Router next = *s.session.routing();
  const int from = OwnerOf(range);
  if (to == from) throw Error(StrCat("range ", range, " belongs to server ", to, " already"));
  next.Move(range, to);  // throws for a server that does not exist
  const int64_t request_id = s.channel.Begin(1);
  Message order;
  order.meta.set_command(proto::MIGRATE);
  order.meta.set_sender(s.session.rank());
  order.meta.set_app_id(s.app_id);
  order.meta.set_client_id(s.channel.client_id());
  order.meta.set_request_id(request_id);
  order.meta.set_range(range);
  order.meta.set_target(to);
  order.meta.set_routing(next.Encode());
  const auto start = std::chrono::steady_clock::now();
  s.session.transport().Send(SessionCore::ServerRank(from), order, nullptr);
  const proto::Meta answer =
      s.channel.Wait(StrCat("moving range ", range, " from server ", from, " to server ", to))[0];
  if (!answer.error().empty()) throw Error(answer.error());
  const Move move{range,
                  from,
                  to,
                  next.epoch(),
                  answer.moved_bytes(),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  s.session.InstallRouting(next);
  s.Broadcast(next);
  return move;
}

}  // namespace pacer
