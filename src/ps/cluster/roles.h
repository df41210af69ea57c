#pragma once

#include "pacer/types.h"

namespace pacer {

// Which rank does what in a job of `size` ranks: rank 0 schedules, ranks 1..servers serve, the
// rest work. Servers and workers are also known by their index within their role (the
// numbering of --inject specs and the metrics log).
class Roles {
 public:
  // Throws Error when the job cannot have these roles: it needs 1 scheduler, at least 1 server
  // and at least 1 worker.
  Roles(int size, int servers);

  int size() const { return size_; }
  int num_servers() const { return servers_; }
  int num_workers() const { return size_ - 1 - servers_; }
  Role RoleOf(int rank) const;
  // Index of `rank` within its role (0 for the scheduler).
  int IndexOf(int rank) const;
  static int ServerRank(int index) { return 1 + index; }
  int WorkerRank(int index) const { return 1 + servers_ + index; }

 private:
  int size_;
  int servers_;
};

}  // namespace pacer
