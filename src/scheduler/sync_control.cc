#include "pacer/sync_control.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "pacer/detail/kv_server_core.h"
#include "pacer/error.h"
#include "ps/session_core.h"
#include "ps/str_cat.h"

namespace pacer {

struct SyncControl::State {
  explicit State(SessionCore& s) : session(s) {}

  // Sends one phase to every server and merges their answers; throws on the first error.
  ResponseStamp Broadcast(proto::Command command, const std::string& mode, int64_t clock) {
    const int servers = session.num_servers();
    int64_t request_id;
    {
      std::lock_guard<std::mutex> lock(mu);
      request_id = ++last_request;
      answered = 0;
      answer = ResponseStamp();
      error.clear();
    }
    for (int s = 0; s < servers; ++s) {
      Message msg;
      msg.meta.set_command(command);
      msg.meta.set_sender(session.rank());
      msg.meta.set_app_id(app_id);
      msg.meta.set_client_id(client_id);
      msg.meta.set_request_id(request_id);
      msg.meta.set_sync_mode(mode);
      msg.meta.set_clock(clock);
      session.transport().Send(SessionCore::ServerRank(s), msg, nullptr);
    }
    std::unique_lock<std::mutex> lock(mu);
    const auto timeout = std::chrono::duration<double>(session.config().timeout_s);
    if (!done.wait_for(lock, timeout, [&] { return answered == servers; })) {
      throw TimeoutError(StrCat("switching to ", mode.empty() ? "a new mode" : mode, ": ", answered,
                                " of ", servers, " servers answered within ",
                                session.config().timeout_s, " s"));
    }
    if (!error.empty()) throw Error(error);
    return answer;
  }

  void OnResponse(Message&& msg) {
    std::lock_guard<std::mutex> lock(mu);
    if (msg.meta.request_id() != last_request) return;  // of a phase that timed out
    if (!msg.meta.error().empty() && error.empty()) error = msg.meta.error();
    answer.Merge({msg.meta.version(), msg.meta.complete_clock(), msg.meta.clock()});
    ++answered;
    done.notify_all();
  }

  SessionCore& session;
  int app_id = 0;
  int client_id = -1;
  std::mutex mu;
  std::condition_variable done;
  int64_t last_request = 0;
  int answered = 0;
  ResponseStamp answer;
  std::string error;
};

SyncControl::SyncControl(Session& session, int app_id)
    : state_(std::make_shared<State>(session.core())) {
  if (!session.is_scheduler()) {
    throw Error(StrCat("rank ", session.rank(), " is a ", RoleName(session.role()),
                       ": only the scheduler switches synchronization modes"));
  }
  state_->app_id = app_id;
  std::weak_ptr<State> weak = state_;
  state_->client_id = session.core().AttachClient([weak](Message&& msg) {
    if (auto state = weak.lock()) state->OnResponse(std::move(msg));
  });
}

SyncControl::~SyncControl() { state_->session.DetachClient(state_->client_id); }

int64_t SyncControl::Switch(const SyncMode& mode) {
  std::lock_guard<std::mutex> control(state_->session.control_mutex());
  const std::string name = mode.ToString();
  SyncMode::Parse(name);  // the servers will parse it the same way
  const int workers = state_->session.num_workers();
  if (mode.kind == SyncMode::Kind::kBackup && mode.backups >= workers) {
    throw Error(StrCat("cannot switch to ", name, ": ", mode.backups,
                       " backup workers leave none of the ", workers, " workers to wait for"));
  }
  const int64_t first_clock = state_->Broadcast(proto::SYNC_PREPARE, "", 0).clock;
  state_->Broadcast(proto::SYNC_COMMIT, name, first_clock);
  return first_clock;
}

}  // namespace pacer
