#include "pacer/migration_control.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "pacer/error.h"
#include "ps/routing.h"
#include "ps/session_core.h"
#include "ps/str_cat.h"

namespace pacer {

struct MigrationControl::State {
  explicit State(SessionCore& s) : session(s) {}

  void OnResponse(Message&& msg) {
    std::lock_guard<std::mutex> lock(mu);
    if (msg.meta.request_id() != last_request || answered) return;  // of a move that timed out
    answered = true;
    error = msg.meta.error();
    bytes = msg.meta.moved_bytes();
    done.notify_all();
  }

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
  int app_id = 0;
  int client_id = -1;
  std::mutex mu;
  std::condition_variable done;
  int64_t last_request = 0;
  bool answered = false;
  bool cancelled = false;
  std::string error;
  int64_t bytes = 0;
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
  std::weak_ptr<State> weak = state_;
  state_->client_id = session.AttachClient([weak](Message&& msg) {
    if (auto state = weak.lock()) state->OnResponse(std::move(msg));
  });
}

MigrationControl::~MigrationControl() { state_->session.DetachClient(state_->client_id); }

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

void MigrationControl::Cancel() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->cancelled = true;
  state_->done.notify_all();
}

int MigrationControl::RangeOf(Key key) const { return state_->session.routing()->RangeOf(key); }

MigrationControl::Move MigrationControl::MoveRange(int range, int to) {
  State& s = *state_;
  std::lock_guard<std::mutex> control(s.session.control_mutex());
  Router next = *s.session.routing();
  const int from = OwnerOf(range);
  if (to == from) throw Error(StrCat("range ", range, " belongs to server ", to, " already"));
  next.Move(range, to);  // throws for a server that does not exist
  int64_t request_id;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    request_id = ++s.last_request;
    s.answered = false;
    s.error.clear();
    s.bytes = 0;
  }
  Message order;
  order.meta.set_command(proto::MIGRATE);
  order.meta.set_sender(s.session.rank());
  order.meta.set_app_id(s.app_id);
  order.meta.set_client_id(s.client_id);
  order.meta.set_request_id(request_id);
  order.meta.set_range(range);
  order.meta.set_target(to);
  order.meta.set_routing(next.Encode());
  const auto start = std::chrono::steady_clock::now();
  s.session.transport().Send(SessionCore::ServerRank(from), order, nullptr);
  Move move;
  {
    std::unique_lock<std::mutex> lock(s.mu);
    const auto timeout = std::chrono::duration<double>(s.session.config().timeout_s);
    if (!s.done.wait_for(lock, timeout, [&] { return s.answered || s.cancelled; })) {
      throw TimeoutError(StrCat("moving range ", range, " from server ", from, " to server ", to,
                                ": no answer within ", s.session.config().timeout_s, " s"));
    }
    if (!s.answered) throw Error(StrCat("moving range ", range, ": cancelled, the job is ending"));
    if (!s.error.empty()) throw Error(s.error);
    move = {
        range,   from,
        to,      next.epoch(),
        s.bytes, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  }
  s.session.InstallRouting(next);
  s.Broadcast(next);
  return move;
}

}  // namespace pacer
