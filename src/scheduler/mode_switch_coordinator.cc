#include "scheduler/mode_switch_coordinator.h"

#include <mutex>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

ModeSwitchCoordinator::ModeSwitchCoordinator(Node& node, int app_id)
    : node_(node),
      channel_(node.cluster(), node.dispatcher(), node.config().timeout_s),
      app_id_(app_id) {}

int64_t ModeSwitchCoordinator::Switch(const SyncMode& mode) {
  std::lock_guard<std::mutex> control(node_.control_mutex());
  const std::string name = mode.ToString();
  SyncMode::Parse(name);  // the servers will parse it the same way
  // Workers take tasks from the scheduler or not by the job's --sync, chosen once at start.
  const std::string& sync = node_.config().sync;
  const bool epsp_now = SyncMode::Starting(sync).kind == SyncMode::Kind::kEpsp;
  if ((mode.kind == SyncMode::Kind::kEpsp) != epsp_now) {
    throw Error(StrCat("cannot switch to ", name, " from --sync=", sync,
                       ": epsp is chosen at the start of a job, not switched to or from"));
  }
  try {
    mode.CheckFits(node_.roles().num_workers());
  } catch (const Error& e) {
    throw Error(StrCat("cannot switch to ", e.what()));
  }
  const int64_t first_clock = Broadcast(proto::SYNC_PREPARE, "", 0).clock;
  Broadcast(proto::SYNC_COMMIT, name, first_clock);
  return first_clock;
}

ResponseStamp ModeSwitchCoordinator::Broadcast(proto::Command command, const std::string& mode,
                                               int64_t clock) {
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

}  // namespace pacer
