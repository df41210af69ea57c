#pragma once

#include <string>
#include <vector>

#include "pacer/types.h"

namespace pacer {

// Which rank does what in a job: rank 0 schedules, `servers` ranks serve, the rest work. Servers
// and workers are also known by their index within their role (the numbering of --inject specs
// and the metrics log), in rank order.
class Roles {
 public:
  // Where the servers go (--server_placement).
  enum class Placement {
    // One host at a time, in the order of the hosts' lowest ranks, the lowest free rank of each,
    // as BytePS puts a server on every machine: each host's links carry a share of the servers'
    // traffic. On one host, ranks 1..servers.
    kSpread,
    // Ranks 1..servers, wherever they are.
    kPack,
  };
  static Placement PlacementNamed(const std::string& name);

  // A job of `size` ranks with its servers packed. Throws Error when the job cannot have these
  // roles: it needs 1 scheduler, at least 1 server and at least 1 worker.
  Roles(int size, int servers);
  // A job whose rank r runs on hosts[r].
  Roles(const std::vector<std::string>& hosts, int servers, Placement placement);

  int size() const { return static_cast<int>(role_.size()); }
  int num_servers() const { return static_cast<int>(server_ranks_.size()); }
  int num_workers() const { return static_cast<int>(worker_ranks_.size()); }
  Role RoleOf(int rank) const { return role_[rank]; }
  // Index of `rank` within its role (0 for the scheduler).
  int IndexOf(int rank) const { return index_[rank]; }
  int ServerRank(int index) const { return server_ranks_[index]; }
  int WorkerRank(int index) const { return worker_ranks_[index]; }
  const std::vector<int>& server_ranks() const { return server_ranks_; }
  const std::vector<int>& worker_ranks() const { return worker_ranks_; }

 private:
  void Assign(const std::vector<bool>& serves);

  std::vector<Role> role_;
  std::vector<int> index_;
  std::vector<int> server_ranks_;
  std::vector<int> worker_ranks_;
};

}  // namespace pacer
