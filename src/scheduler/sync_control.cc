#include "pacer/sync_control.h"

#include <mutex>
#include <string>

#include "pacer/detail/kv_server_core.h"
#include "pacer/error.h"
#include "ps/control_channel.h"
#include "ps/session_core.h"
#include "ps/str_cat.h"

namespace pacer {

struct SyncControl::State {
  explicit State(SessionCore& s) : session(s), channel(s) {}

  // Sends one phase to every server and merges their answers; throws on the first error.
  ResponseStamp Broadcast(proto::Command command, const std::string& mode, int64_t clock) {
    const int servers = session.num_servers();
    const int64_t request_id = channel.Begin(servers);
    for (int s = 0; s < servers; ++s) {
      Message msg;
      msg.meta.set_command(command);
      msg.meta.set_sender(session.rank());
      msg.meta.set_app_id(app_id);
      msg.meta.set_client_id(channel.client_id());
      msg.meta.set_request_id(request_id);
      msg.meta.set_sync_mode(mode);
      msg.meta.set_clock(clock);
      session.transport().Send(SessionCore::ServerRank(s), msg, nullptr);
    }
    ResponseStamp answer;
    for (const proto::Meta& meta :
         channel.Wait(StrCat("switching to ", mode.empty() ? std::string("a new mode") : mode))) {
      if (!meta.error().empty()) throw Error(meta.error());
      answer.Merge({meta.version(), meta.complete_clock(), meta.clock()});
    }
    return answer;
  }

  SessionCore& session;
  ControlChannel channel;
  int app_id = 0;
};

SyncControl::SyncControl(Session& session, int app_id)
    : state_(std::make_shared<State>(session.core())) {
  if (!session.is_scheduler()) {
    throw Error(StrCat("rank ", session.rank(), " is a ", RoleName(session.role()),
                       ": only the scheduler switches synchronization modes"));
  }
  state_->app_id = app_id;
}

SyncControl::~SyncControl() = default;

int64_t SyncControl::Switch(const SyncMode& mode) {
  std::lock_guard<std::mutex> control(state_->session.control_mutex());
  const std::string name = mode.ToString();
  SyncMode::Parse(name);  // the servers will parse it the same way
  const int workers = state_->session.num_workers();
  // Workers take tasks from the scheduler or not by the job's --sync, chosen once at start.
  const bool epsp_now =
      SyncMode::Parse(state_->session.config().sync).kind == SyncMode::Kind::kEpsp;
  if ((mode.kind == SyncMode::Kind::kEpsp) != epsp_now) {
    throw Error(StrCat("cannot switch to ", name, " from --sync=", state_->session.config().sync,
                       ": epsp is chosen at the start of a job, not switched to or from"));
  }
  if (mode.kind == SyncMode::Kind::kBackup && mode.backups >= workers) {
    throw Error(StrCat("cannot switch to ", name, ": ", mode.backups,
                       " backup workers leave none of the ", workers, " workers to wait for"));
  }
  const int64_t first_clock = state_->Broadcast(proto::SYNC_PREPARE, "", 0).clock;
  state_->Broadcast(proto::SYNC_COMMIT, name, first_clock);
  return first_clock;
}

}  // namespace pacer
