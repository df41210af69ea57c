#include "scheduler/straggler_watch.h"

#include <glog/logging.h>

#include <algorithm>
#include <vector>

namespace pacer {
namespace {

straggler::DetectorOptions DetectorOptionsOf(const Config& c) {
  straggler::DetectorOptions o;
  o.worker_ratio = c.straggler_ratio;
  o.compute_ratio = c.compute_ratio;
  o.transfer_ratio = c.transfer_ratio;
  o.server_ratio = c.server_ratio;
  o.predicted_margin = c.predicted_margin;
  o.window = c.detect_window;
  o.floor_s = c.straggler_floor_ms / 1000;
  return o;
}

// A nearly idle interval says little about a server's speed, and the first ones of a job pay its
// warm-up (page faults, first allocations).
constexpr int64_t kMinRequests = 20;
constexpr int kWarmupReports = 10;

}  // namespace

StragglerWatch::StragglerWatch(const Node& node, MetricsLog& metrics)
    : node_(node), metrics_(metrics), detector_(DetectorOptionsOf(node.config())) {}

void StragglerWatch::OnIteration(int index, int rank, const IterationReport& r) {
  const bool relayed = r.partner >= 0;
  // SMS's skip sends part of the gradients: the links are judged by the time the whole would
  // have taken at the rate measured, else a skipping straggler would look fast and lose its skip.
  const double sent = static_cast<double>(r.bytes_out);
  const double whole = sent + static_cast<double>(r.bytes_skipped);
  const bool skipped = r.bytes_skipped > 0 && sent == 0;
  const double transfer_s = r.bytes_skipped > 0 && sent > 0 ? r.push_s * whole / sent : r.push_s;
  detector_.Observe(
      straggler::WorkerIteration{index, r.iteration, r.compute_s, transfer_s, relayed, skipped});
  if (relayed) return;  // its busy time is not its own links' to predict from
  auto& predictor = predictors_[index];
  if (!predictor) {
    straggler::PredictorOptions options;
    options.window = node_.config().predictor_window;
    predictor = straggler::MakePredictor(options);
  }
  predictor->Observe(r.compute_s + r.push_s);
}

void StragglerWatch::OnServerReport(int index, int rank, const ServerReport& r) {
  if (r.requests >= kMinRequests && ++server_reports_[index] > kWarmupReports) {
    detector_.Observe(straggler::ServerInterval{index, ServiceMicrosPerMb(r)});
  }
}

void StragglerWatch::OnExclusion(int index) {
  detector_.Forget(index);
  predictors_.erase(index);
}

void StragglerWatch::OnBoundary(int64_t iteration) {
  std::vector<straggler::Detection> found = detector_.Detect();
  std::map<int, double> predicted;
  for (const auto& [index, p] : predictors_) predicted[index] = p->Predict();
  for (const straggler::Detection& d : detector_.DetectPredicted(predicted)) found.push_back(d);
  std::set<std::pair<int, straggler::Detection::Kind>> now;
  for (const straggler::Detection& d : found) {
    now.insert({d.index, d.kind});
    if (!flagged_.count({d.index, d.kind})) Decide(iteration, d, "flag");
  }
  for (const auto& [index, kind] : flagged_) {
    if (!now.count({index, kind})) Decide(iteration, {kind, index, 1.0}, "clear");
  }
  flagged_ = std::move(now);
}

std::set<int> StragglerWatch::FlaggedWorkers(
    std::initializer_list<straggler::Detection::Kind> kinds) const {
  std::set<int> workers;
  for (const auto& [index, kind] : flagged_) {
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) workers.insert(index);
  }
  return workers;
}

void StragglerWatch::Decide(int64_t iteration, const straggler::Detection& d, const char* action) {
  const bool server = d.kind == straggler::Detection::Kind::kServer;
  const int rank = server ? node_.roles().ServerRank(d.index) : node_.roles().WorkerRank(d.index);
  // Predictions come and go with every iteration's noise: the log keeps measured stragglers (the
  // metrics log keeps every decision).
  LOG_IF(INFO, d.kind != straggler::Detection::Kind::kPredicted || VLOG_IS_ON(1))
      << "iteration " << iteration << ": " << action << " " << (server ? "server " : "worker ")
      << d.index << " (rank " << rank << ") as a " << straggler::KindName(d.kind) << " straggler, "
      << d.ratio << "x";
  metrics_.Detection(iteration, node_.cluster().SecondsSinceStart(), rank, d, action);
}

}  // namespace pacer
