#include "scenario_presets.h"

#include <pacer/error.h>
#include <pacer/sync_mode.h>

#include <stdexcept>

namespace pacer {
namespace bench {

std::vector<std::string> ScenarioInjects(const std::string& scenario) {
  if (scenario == "S1") return {"worker:0:compute=3x"};
  if (scenario == "S2") return {"worker:*:compute=3x@p=0.1"};
  if (scenario == "S5") return {"worker:0:compute=3x@period=200:50"};
  if (scenario == "S6") return {};
  if (scenario == "S3" || scenario == "S4") {
    throw std::invalid_argument("--scenario=" + scenario +
                                ": its faults (link bandwidth, server service rate) are not "
                                "carried out yet; S1, S2, S5 and S6 are");
  }
  throw std::invalid_argument("--scenario=" + scenario + ": expected S1 to S6");
}

std::string PolicySync(const std::string& policy) {
  try {
    return SyncMode::Parse(policy).ToString();
  } catch (const Error& e) {
    throw std::invalid_argument("--policy=" + policy + ": not a known policy (" + e.what() + ")");
  }
}

}  // namespace bench
}  // namespace pacer
