#pragma once

#include <cstdint>
#include <string>

#include "pacer/detail/response_stamp.h"
#include "pacer/sync_mode.h"
#include "ps/cluster/control_channel.h"
#include "ps/node/node.h"

namespace pacer {

// The scheduler's side of a mode switch (SyncControl, STRN's SyncOrders): the two phases, each
// sent to every server.
class ModeSwitchCoordinator {
 public:
  ModeSwitchCoordinator(Node& node, int app_id);

  // Returns the first clock in `mode` once every server agreed to it. Throws Error for a mode the
  // job cannot switch to (epsp, chosen at start; one that does not fit its workers) or that a
  // server rejects, TimeoutError after timeout_s.
  int64_t Switch(const SyncMode& mode);

 private:
  // Sends one phase to every server and merges their answers; throws on the first error.
  ResponseStamp Broadcast(proto::Command command, const std::string& mode, int64_t clock);

  Node& node_;
  ControlChannel channel_;
  const int app_id_;
};

}  // namespace pacer
