#include "pacer/sync_control.h"

#include "common/str_cat.h"
#include "pacer/error.h"
#include "scheduler/mode_switch_coordinator.h"

namespace pacer {

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
