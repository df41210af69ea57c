#pragma once

#include "pacer/migration_control.h"
#include "ps/cluster/control_channel.h"
#include "ps/node/node.h"

namespace pacer {

// The scheduler's side of moving a key range (SAS, STRAGGLERS.md section 3): it orders the owner
// to move the range, waits for the new owner's acknowledgement and then tells every node the new
// table. MigrationControl is its public face; the scheduler's own policies use it directly.
class MigrationCoordinator {
 public:
  // Throws Error unless `node` is the scheduler.
  MigrationCoordinator(Node& node, int app_id);

  int num_ranges() const;
  int num_servers() const;
  int OwnerOf(int range) const;
  int RangeOf(Key key) const;
  MigrationControl::Move MoveRange(int range, int to);
  void Cancel() { channel_.Cancel(); }

 private:
  void Broadcast(const Router& table);

  Node& node_;
  const int app_id_;
  ControlChannel channel_;
};

}  // namespace pacer
