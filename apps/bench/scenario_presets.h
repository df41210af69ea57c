#pragma once

#include <string>
#include <vector>

namespace pacer {
namespace bench {

// The reference scenarios of STRAGGLERS.md section 9 as --inject specs, for a job of `workers`
// workers: worker 0 (or server 0) is the one slowed. S3 caps every worker's links (both ways) at
// `link_bytes_per_s` and worker 0's at a third of it; S4 slows server 0 to a third of its service
// rate from 4 s to 10 s after the start (data loading takes the first seconds). Throws
// std::invalid_argument for an unknown name.
std::vector<std::string> ScenarioInjects(const std::string& scenario, int workers,
                                         double link_bytes_per_s);

// A baseline policy's --sync mode (they are the same words); throws std::invalid_argument for a
// policy this build does not know.
std::string PolicySync(const std::string& policy);

}  // namespace bench
}  // namespace pacer
