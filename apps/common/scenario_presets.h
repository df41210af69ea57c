#pragma once

#include <pacer/config.h>

#include <string>
#include <vector>

namespace pacer {
namespace bench {

// The reference scenarios of STRAGGLERS.md section 9 as --inject specs, for a job of `workers`
// workers: worker 0 (or server 0) is the one slowed. S3 caps every worker's links (both ways) at
// `link_bytes_per_s` and worker 0's at a third of it; S4 slows server 0 to a third of its service
// rate in `server_window` (START:LENGTH since the job began, as in --inject). Throws
// std::invalid_argument for an unknown name.
std::vector<std::string> ScenarioInjects(const std::string& scenario, int workers,
                                         double link_bytes_per_s, const std::string& server_window);

// Sets a policy's options: a baseline's --sync mode (they are the same words), or sas: BSP with
// --balance=sas. Throws std::invalid_argument for a policy this build does not know.
void ApplyPolicy(const std::string& policy, Config* config);

}  // namespace bench
}  // namespace pacer
