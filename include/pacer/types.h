#pragma once

#include <cstdint>

namespace pacer {

using Key = uint64_t;

enum class Role { kScheduler, kServer, kWorker };

const char* RoleName(Role role);

// Barrier groups, combinable with |.
enum NodeGroup : int {
  kSchedulerGroup = 1,
  kServerGroup = 2,
  kWorkerGroup = 4,
  kAllNodes = kSchedulerGroup | kServerGroup | kWorkerGroup,
};

}  // namespace pacer
