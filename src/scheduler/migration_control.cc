#include "pacer/migration_control.h"

#include "ps/node/node.h"
#include "scheduler/migration_coordinator.h"

namespace pacer {

MigrationControl::MigrationControl(Node& node, int app_id)
    : coordinator_(std::make_unique<MigrationCoordinator>(node, app_id)) {}

MigrationControl::~MigrationControl() = default;

int MigrationControl::num_ranges() const { return coordinator_->num_ranges(); }
int MigrationControl::num_servers() const { return coordinator_->num_servers(); }
int MigrationControl::OwnerOf(int range) const { return coordinator_->OwnerOf(range); }
int MigrationControl::RangeOf(Key key) const { return coordinator_->RangeOf(key); }
void MigrationControl::Cancel() { coordinator_->Cancel(); }

MigrationControl::Move MigrationControl::MoveRange(int range, int to) {
  return coordinator_->MoveRange(range, to);
}

}  // namespace pacer
