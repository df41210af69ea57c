#pragma once

#include <cstdint>
#include <memory>

#include "pacer/types.h"

namespace pacer {

class Node;                  // a rank inside a Session (src/ps/node/node.h)
class Session;               // include "pacer/session.h" to make one
class MigrationCoordinator;  // the scheduler's side of a move (src/scheduler/)

/// The scheduler's handle on key placement (SAS, STRAGGLERS.md section 3). Keys live in ranges
/// (num_ranges of them, a fixed cut of the hashed key space); each range has one owner server.
/// MoveRange gives a range to another server while training goes on: the owner freezes it, sends
/// the keys' values and optimizer state (momentum, Adam moments, step counts), clocks and partial
/// sums to the new owner, which takes over; requests routed by the old table are redirected and
/// resent by the workers, unseen by the caller. No update is lost or applied twice.
class MigrationControl {
 public:
  /// On the scheduler: moves the keys of the servers' app `app_id` (ParameterServer or KVServer).
  explicit MigrationControl(Session& session, int app_id = 0);
  ~MigrationControl();
  MigrationControl(const MigrationControl&) = delete;
  MigrationControl& operator=(const MigrationControl&) = delete;

  /// What one MoveRange did.
  struct Move {
    int range = -1;     ///< the range moved
    int from = -1;      ///< the server index that owned it
    int to = -1;        ///< the server index that owns it now
    int64_t epoch = 0;  ///< the routing table's epoch after the move
    int64_t bytes = 0;  ///< state moved
    /// From the order to the new owner's acknowledgement: the range was frozen for at most this
    /// long.
    double pause_s = 0;
  };

  /// The number of key ranges; a range is 0..num_ranges()-1.
  int num_ranges() const;
  /// The number of servers; a server index is 0..num_servers()-1.
  int num_servers() const;
  /// The server index that owns `range` now. Throws Error for a range that does not exist.
  int OwnerOf(int range) const;
  /// The range `key` falls in.
  int RangeOf(Key key) const;

  /// Moves `range` to server `to` (0..num_servers-1) and tells every node the new table. Throws
  /// Error, changing nothing, for a range or server that does not exist, a range `to` owns
  /// already, or a move a server refuses; TimeoutError after timeout_s.
  Move MoveRange(int range, int to);
  /// Makes a MoveRange that waits, and every later one, throw Error at once (a job ending).
  void Cancel();

 private:
  // What the Session& constructor does, given the node the session hands this role
  // (src/session/role_construction.cc).
  MigrationControl(Node& node, int app_id);

  std::unique_ptr<MigrationCoordinator> coordinator_;
};

}  // namespace pacer
