#include "pacer/sync_control.h"

#include <mutex>
#include <string>

#include "common/str_cat.h"
#include "pacer/detail/response_stamp.h"
#include "pacer/error.h"
#include "ps/cluster/control_channel.h"
#include "ps/node/node.h"

namespace pacer {

// The scheduler's side of a mode switch: the two phases, each sent to every server.
class ModeSwitchCoordinator {
 public:
  ModeSwitchCoordinator(Node& node, int app_id)
      : node_(node),
        channel_(node.cluster(), node.dispatcher(), node.config().timeout_s),
        app_id_(app_id) {}

  int64_t Switch(const SyncMode& mode) {
    std::lock_guard<std::mutex> control(node_.control_mutex());
    const std::string name = mode.ToString();
    SyncMode::Parse(name);  // the servers will parse it the same way
    const int workers = node_.roles().num_workers();
    // Workers take tasks from the scheduler or not by the job's --sync, chosen once at start.
    const std::string& sync = node_.config().sync;
    const bool epsp_now = SyncMode::Parse(sync).kind == SyncMode::Kind::kEpsp;
    if ((mode.kind == SyncMode::Kind::kEpsp) != epsp_now) {
      throw Error(StrCat("cannot switch to ", name, " from --sync=", sync,
                         ": epsp is chosen at the start of a job, not switched to or from"));
    }
    try {
      mode.CheckFits(workers);
    } catch (const Error& e) {
      throw Error(StrCat("cannot switch to ", e.what()));
    }
    const int64_t first_clock = Broadcast(proto::SYNC_PREPARE, "", 0).clock;
    Broadcast(proto::SYNC_COMMIT, name, first_clock);
    return first_clock;
  }

 private:
  // Sends one phase to every server and merges their answers; throws on the first error.
  ResponseStamp Broadcast(proto::Command command, const std::string& mode, int64_t clock) {
    const int servers = node_.roles().num_servers();
    const int64_t request_id = channel_.Begin(servers);
    for (int s = 0; s < servers; ++s) {
      Message msg = channel_.Request(command, node_.rank(), app_id_, request_id);
      msg.meta.set_sync_mode(mode);
      msg.meta.set_clock(clock);
      node_.transport().Send(node_.roles().ServerRank(s), msg, nullptr);
    }
    ResponseStamp answer;
    for (const proto::Meta& meta :
         channel_.Wait(StrCat("switching to ", mode.empty() ? std::string("a new mode") : mode))) {
      if (!meta.error().empty()) throw Error(meta.error());
      answer.Merge({meta.version(), meta.complete_clock(), meta.clock()});
    }
    return answer;
  }

  Node& node_;
  ControlChannel channel_;
  const int app_id_;
};

SyncControl::SyncControl(Node& node, int app_id) {
  if (node.role() != Role::kScheduler) {
    throw Error(StrCat("rank ", node.rank(), " is a ", RoleName(node.role()),
                       ": only the scheduler switches synchronization modes"));
  }
  coordinator_ = std::make_unique<ModeSwitchCoordinator>(node, app_id);
}

SyncControl::~SyncControl() = default;

int64_t SyncControl::Switch(const SyncMode& mode) { return coordinator_->Switch(mode); }

}  // namespace pacer
