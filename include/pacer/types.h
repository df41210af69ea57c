#pragma once

#include <cstdint>

namespace pacer {

/// A parameter's key: KVWorker and KVServer address values by key, and GradientSync cuts its
/// tensors into keys. Placement spreads keys by hashing, so consecutive keys 0, 1, 2, ... divide
/// evenly over the servers.
using Key = uint64_t;

/// A rank's part in the job: kScheduler (rank 0), kServer (the ranks `--server_placement` picks)
/// or kWorker (the rest).
enum class Role { kScheduler, kServer, kWorker };

/// "scheduler", "server" or "worker".
const char* RoleName(Role role);

/// Barrier groups, combinable with |.
enum NodeGroup : int {
  kSchedulerGroup = 1,                                        ///< the scheduler
  kServerGroup = 2,                                           ///< every server
  kWorkerGroup = 4,                                           ///< every worker
  kAllNodes = kSchedulerGroup | kServerGroup | kWorkerGroup,  ///< every rank
};

}  // namespace pacer
