#include "scenario_presets.h"

#include <pacer/error.h>
#include <pacer/sync_mode.h>

#include <stdexcept>

namespace pacer {
namespace bench {

std::vector<std::string> ScenarioInjects(const std::string& scenario, int workers,
                                         double link_bytes_per_s,
                                         const std::string& server_window) {
  if (scenario == "S1") return {"worker:0:compute=3x"};
  if (scenario == "S2") return {"worker:*:compute=3x@p=0.1"};
  if (scenario == "S3") {
    std::vector<std::string> specs;
    for (int w = 0; w < workers; ++w) {
      const double rate = w == 0 ? link_bytes_per_s / 3 : link_bytes_per_s;
      const std::string bw = ":bw=" + std::to_string(static_cast<long long>(rate)) + "B/s";
      specs.push_back("link:w" + std::to_string(w) + "->*" + bw);
      specs.push_back("link:*->w" + std::to_string(w) + bw);
    }
    return specs;
  }
  if (scenario == "S4") return {"server:0:service=3x@window=" + server_window};
  if (scenario == "S5") return {"worker:0:compute=3x@period=200:50"};
  if (scenario == "S6") return {};
  throw std::invalid_argument("--scenario=" + scenario + ": expected S1 to S6");
}

void ApplyPolicy(const std::string& policy, Config* config) {
  if (policy == "sas") {
    config->sync = "bsp";
    config->balance = "sas";
    return;
  }
  try {
    config->sync = SyncMode::Parse(policy).ToString();
  } catch (const Error& e) {
    throw std::invalid_argument("--policy=" + policy + ": not a known policy (" + e.what() + ")");
  }
}

}  // namespace bench
}  // namespace pacer
