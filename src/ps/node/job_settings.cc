#include "ps/node/job_settings.h"

#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/config_environment.h"
#include "common/optimizer_spec.h"
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

void ExpectOneOf(const char* flag, const std::string& value,
                 std::initializer_list<const char*> allowed) {
  std::string list;
  size_t i = 0;
  for (const char* a : allowed) {
    if (value == a) return;
    list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + std::string(a);
    ++i;
  }
  throw Error(StrCat("--", flag, "=", value, ": expected ", list));
}

template <typename T>
void ExpectAtLeast(const char* flag, T value, T least) {
  if (!(value >= least)) throw Error(StrCat("--", flag, "=", value, ": expected >= ", least));
}

template <typename T>
void ExpectAbove(const char* flag, T value, T bound) {
  if (!(value > bound)) throw Error(StrCat("--", flag, "=", value, ": expected > ", bound));
}

void CheckNumbers(const Config& c) {
  ExpectAtLeast("server_threads", c.server_threads, 0);
  ExpectAbove("timeout_s", c.timeout_s, 0.0);
  ExpectAtLeast("reduce_threads", c.reduce_threads, 0);
  ExpectAbove("partition_bytes", c.partition_bytes, int64_t{0});
  ExpectAbove("scheduling_credit", c.scheduling_credit, 0);
  ExpectAtLeast("straggler_ratio", c.straggler_ratio, 1.0);
  ExpectAtLeast("compute_ratio", c.compute_ratio, 1.0);
  ExpectAtLeast("transfer_ratio", c.transfer_ratio, 1.0);
  ExpectAtLeast("server_ratio", c.server_ratio, 1.0);
  ExpectAtLeast("predicted_margin", c.predicted_margin, 0.0);
  ExpectAtLeast("straggler_floor_ms", c.straggler_floor_ms, 0.0);
  ExpectAbove("detect_window", c.detect_window, 0);
  ExpectAbove("predictor_window", c.predictor_window, 0);
  ExpectAbove("server_report_ms", c.server_report_ms, 0);
  ExpectAtLeast("migrate_every", c.migrate_every, 0);
  ExpectAbove("relays_per_partner", c.relays_per_partner, 0);
  ExpectAbove("withhold_every", c.withhold_every, 0);
  ExpectAtLeast("withhold_threshold", c.withhold_threshold, 0.0);
  ExpectAbove("shrink_margin", c.shrink_margin, 0.0);
  ExpectAtLeast("skip_eps", c.skip_eps, 0.0);
  ExpectAbove("heartbeat_timeout_s", c.heartbeat_timeout_s, 0.0);
  const TransportTuning& t = c.tuning;
  ExpectAbove("max_inflight_bytes", t.max_inflight_bytes, int64_t{0});
  ExpectAtLeast("max_message_bytes", t.max_message_bytes, int64_t{0});
  ExpectAtLeast("rndv_threshold", t.rndv_threshold, int64_t{0});
  ExpectAtLeast("shm_ring_bytes", t.shm_ring_bytes, int64_t{0});
  ExpectAtLeast("read_threads", t.read_threads, 0);
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
  ExpectOneOf("transport", config.transport, {"auto", "ucx", "mpi"});
  ExpectOneOf("reduce_device", config.reduce_device, {"cpu", "cuda"});
  ExpectOneOf("balance", config.balance, {"none", "sas"});
  ExpectOneOf("comm_policy", config.comm_policy, {"none", "stret"});
  ExpectOneOf("predicted_policy", config.predicted_policy, {"none", "sms"});
  ExpectOneOf("on_worker_loss", config.on_worker_loss, {"abort", "continue"});
  CheckNumbers(config);
  SyncMode::Parse(config.sync);
  OptimizerSpec::Parse(config.optimizer);
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
