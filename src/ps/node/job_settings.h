#pragma once

#include <vector>

#include "common/fault_spec.h"
#include "pacer/config.h"
#include "ps/cluster/roles.h"

namespace pacer {

// What a job's configuration says once checked: the parsed forms of the options that are
// spelled as text. Every rank makes one when it joins, before it sends anything, so a bad
// value stops each rank at once with the same message.
struct JobSettings {
  // Checks every option against what it allows and against the job's `roles` (a spec may only
  // name nodes the job has). Throws Error naming the option, its value and what is expected.
  static JobSettings Check(const Config& config, const Roles& roles);

  // --inject, parsed.
  std::vector<FaultSpec> faults;
  // --server_bandwidth, parsed: bytes per second per server index, 0 where unknown.
  std::vector<double> server_bandwidth;
};

}  // namespace pacer
