#pragma once

#include <string>
#include <vector>

namespace pacer {
namespace bench {

// The reference scenarios of STRAGGLERS.md section 9 as --inject specs (worker 0 is the one
// slowed). Throws std::invalid_argument for an unknown name, or one whose faults are not carried
// out yet (S3 needs link shaping, S4 server slowdowns).
std::vector<std::string> ScenarioInjects(const std::string& scenario);

// A baseline policy's --sync mode (they are the same words); throws std::invalid_argument for a
// policy this build does not know.
std::string PolicySync(const std::string& policy);

}  // namespace bench
}  // namespace pacer
