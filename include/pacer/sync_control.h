#pragma once

#include <cstdint>
#include <memory>

#include "pacer/sync_mode.h"

namespace pacer {

class Node;                   // a rank inside a Session (src/ps/node/node.h)
class Session;                // include "pacer/session.h" to make one
class ModeSwitchCoordinator;  // the scheduler's side of a switch (src/scheduler/)

/// The scheduler's handle on the servers' synchronization mode. Switch changes it for the whole
/// job at one iteration boundary, in two phases: every server reports the first clock it has not
/// seen (holding pushes from there on), then all switch from the highest of those clocks T.
/// Updates of clocks before T follow the old rule, those from T on the new one; none is lost or
/// applied twice.
class SyncControl {
 public:
  /// On the scheduler: switches the mode of the servers' ParameterServer of the same `app_id`.
  explicit SyncControl(Session& session, int app_id = 0);
  ~SyncControl();
  SyncControl(const SyncControl&) = delete;
  SyncControl& operator=(const SyncControl&) = delete;

  /// Returns T, the first clock in `mode`, once every server has agreed to it (workers keep
  /// training meanwhile). Throws Error if a server rejects the mode or it switches to or from
  /// epsp (chosen at start), TimeoutError after timeout_s.
  int64_t Switch(const SyncMode& mode);

 private:
  // What the Session& constructor does, given the node the session hands this role
  // (src/session/role_construction.cc).
  SyncControl(Node& node, int app_id);

  std::unique_ptr<ModeSwitchCoordinator> coordinator_;
};

}  // namespace pacer
