#include "ps/node/job_settings.h"

#include <sstream>
#include <stdexcept>
#include <string>

#include "common/config_options.h"
#include "common/str_cat.h"
#include "pacer/error.h"
#include "pacer/sync_mode.h"

namespace pacer {
namespace {

// --server_bandwidth: one RATE for every server, or one per server.
std::vector<double> ParseServerBandwidth(const std::string& text, int servers) {
  if (text.empty()) return std::vector<double>(servers, 0);
  std::vector<double> rates;
  try {
    std::stringstream list(text);
    for (std::string rate; std::getline(list, rate, ',');) {
      rates.push_back(ParseRate(rate));
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

// A spec's node or link end must be one the job has.
void CheckNamed(const std::string& spec, const FaultSpec::Node& node, const Roles& r) {
  using By = FaultSpec::Node::By;
  const char* what = nullptr;
  int count = 0;
  switch (node.by) {
    case By::kAny:
      return;
    case By::kRank:
      what = "rank";
      count = r.size();
      break;
    case By::kWorker:
      what = "worker";
      count = r.num_workers();
      break;
    case By::kServer:
      what = "server";
      count = r.num_servers();
      break;
  }
  if (node.number >= count) {
    throw Error(StrCat("--inject=", spec, ": names ", what, " ", node.number, ", but the job has ",
                       count, " ", what, count == 1 ? "" : "s", " (0..", count - 1, ")"));
  }
}

}  // namespace

JobSettings JobSettings::Check(const Config& config, const Roles& roles) {
  if (const std::string problem = EnvironmentProblem(); !problem.empty()) throw Error(problem);
  CheckOptions(config);
  try {  // the mode's workers against the job's, on every rank before any message
    SyncMode::Starting(config.sync).CheckFits(roles.num_workers());
  } catch (const Error& e) {
    throw Error(StrCat("--sync=", config.sync, ": ", e.what()));
  }
  JobSettings settings;
  settings.server_bandwidth = ParseServerBandwidth(config.server_bandwidth, config.servers);
  for (const std::string& spec : config.inject) {
    try {
      settings.faults.push_back(FaultSpec::Parse(spec));
    } catch (const std::invalid_argument& e) {
      throw Error(e.what());
    }
    const FaultSpec& f = settings.faults.back();
    if (f.target == FaultSpec::Target::kLink) {
      CheckNamed(spec, f.from, roles);
      CheckNamed(spec, f.to, roles);
    } else {
      CheckNamed(spec, f.node, roles);
    }
  }
  return settings;
}

}  // namespace pacer
