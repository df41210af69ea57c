#include "ps/node/job_settings.h"

#include <sstream>
#include <stdexcept>
#include <string>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// --server_bandwidth: one RATE for every server, or one per server.
std::vector<double> ParseServerBandwidth(const std::string& text, int servers) {
  if (text.empty()) return std::vector<double>(servers, 0);
  std::vector<double> rates;
  try {
    std::stringstream list(text);
    for (std::string rate; std::getline(list, rate, ',');) {
      rates.push_back(straggler::ParseRate(rate));
    }
  } catch (const std::invalid_argument& e) {
    throw Error("--server_bandwidth=" + text + ": " + e.what());
  }
  if (rates.size() == 1) return std::vector<double>(servers, rates[0]);
  if (rates.size() != static_cast<size_t>(servers)) {
    throw Error(StrCat("--server_bandwidth=", text, ": ", rates.size(), " rates for ", servers,
                       " servers (give one, or one per server)"));
  }
  return rates;
}

}  // namespace

JobSettings JobSettings::Check(const Config& config) {
  if (config.balance != "none" && config.balance != "sas") {
    throw Error("--balance=" + config.balance + ": expected none or sas");
  }
  JobSettings settings;
  settings.server_bandwidth = ParseServerBandwidth(config.server_bandwidth, config.servers);
  for (const std::string& spec : config.inject) {
    try {
      settings.faults.push_back(straggler::FaultSpec::Parse(spec));
    } catch (const std::invalid_argument& e) {
      throw Error(e.what());
    }
  }
  return settings;
}

}  // namespace pacer
