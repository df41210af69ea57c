#include "scheduler/monitor.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "pacer/error.h"

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
  return o;
}

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  return line;
}

constexpr int64_t kMinRequests = 20;
constexpr int kWarmupReports = 10;

}  // namespace

Monitor::Monitor(SessionCore& session)
    : session_(session),
      detector_(DetectorOptionsOf(session.config())),
      reported_(session.num_workers(), 0),
      rng_(static_cast<uint64_t>(session.config().inject_seed)) {
  const std::string& path = session.config().metrics;
  if (!path.empty()) {
    metrics_.open(path, std::ios::out | std::ios::trunc);
    if (!metrics_) throw Error("--metrics=" + path + ": cannot open the file for writing");
  }
  const bool balance = session.config().balance == "sas" && session.num_servers() > 1;
  if (balance) {
    balancer_ = std::make_unique<SasBalancer>(
        session.num_servers(), session.routing()->num_ranges(), session.server_bandwidth());
  }
  if ((session.config().migrate_every > 0 || balance) && session.num_servers() > 1) {
    mover_ = std::make_unique<RangeMover>(
        session, [this](const RangeMover::Order& order, const MigrationControl::Move& move) {
          Moved(order, move);
        });
  }
  session_.SetFinalizeHook([this] { Stop(); });
  session_.SetReportSinks(
      [this](int rank, const IterationReport& report) { OnReport(rank, report); },
      [this](int rank, const ServerReport& report) { OnServerReport(rank, report); });
}

Monitor::~Monitor() {
  session_.SetFinalizeHook(nullptr);
  Stop();
  session_.SetReportSinks(nullptr, nullptr);
}

void Monitor::Stop() {
  std::unique_ptr<RangeMover> mover;
  {
    std::lock_guard<std::mutex> lock(mu_);
    mover = std::move(mover_);
  }
  mover.reset();  // outside the lock: a finishing move logs under it
}

void Monitor::OnServerReport(int rank, const ServerReport& r) {
  std::lock_guard<std::mutex> lock(mu_);
  const int index = rank - 1;
  // Per MB of work received (each request counts at least 64 KiB, see ServiceReporter).
  const int64_t bytes = r.bytes_in;
  const double us_per_mb = bytes > 0 ? r.service_s * 1e6 / (static_cast<double>(bytes) / 1e6) : 0;
  if (metrics_.is_open()) {
    metrics_ << Format(
        "{\"type\":\"server\",\"rank\":%d,\"index\":%d,\"t_s\":%.6f,"
        "\"service_us_per_mb\":%.3f,\"queue\":%lld,\"bytes_in\":%lld,\"bytes_out\":%lld,"
        "\"keys\":%lld}\n",
        rank, index, r.t_s, us_per_mb, static_cast<long long>(r.queue),
        static_cast<long long>(r.bytes_in), static_cast<long long>(r.bytes_out),
        static_cast<long long>(r.keys));
  }
  server_keys_[index] = r.keys;
  if (balancer_ && !balancer_->Observe(index, r)) {
    LOG(WARNING) << "server " << index << " (rank " << rank << ") reported the bytes of "
                 << r.range_bytes.size() << " key ranges, but the table has "
                 << session_.routing()->num_ranges() << ": SAS ignores the report";
  }
  // A nearly idle interval says little about a server's speed, and the first ones of a job pay
  // its warm-up (page faults, first allocations).
  if (r.requests >= kMinRequests && ++server_reports_[index] > kWarmupReports) {
    detector_.Observe(straggler::ServerInterval{index, us_per_mb});
  }
}

void Monitor::OnReport(int rank, const IterationReport& r) {
  std::lock_guard<std::mutex> lock(mu_);
  const int index = rank - 1 - session_.num_servers();
  if (metrics_.is_open()) {
    metrics_ << Format(
        "{\"type\":\"iter\",\"rank\":%d,\"role\":\"worker\",\"index\":%d,\"iter\":%lld,"
        "\"clock\":%lld,\"t_comp_ms\":%.4f,\"t_push_ms\":%.4f,\"t_pull_ms\":%.4f,"
        "\"t_wait_ms\":%.4f,\"bytes_out\":%lld,\"bytes_in\":%lld,\"batch\":%lld,"
        "\"version\":%lld,\"t_start_s\":%.6f}\n",
        rank, index, static_cast<long long>(r.iteration), static_cast<long long>(r.clock),
        r.compute_s * 1e3, r.push_s * 1e3, r.pull_s * 1e3, r.wait_s * 1e3,
        static_cast<long long>(r.bytes_out), static_cast<long long>(r.bytes_in),
        static_cast<long long>(r.batch), static_cast<long long>(r.version), r.start_s);
  }
  detector_.Observe(straggler::WorkerIteration{index, r.iteration, r.compute_s, r.push_s});
  auto& predictor = predictors_[index];
  if (!predictor) {
    straggler::PredictorOptions options;
    options.window = session_.config().predictor_window;
    predictor = straggler::MakePredictor(options);
  }
  predictor->Observe(r.compute_s + r.push_s);
  reported_[index] = std::max(reported_[index], r.iteration + 1);
  const int64_t boundary = *std::min_element(reported_.begin(), reported_.end());
  if (boundary > boundary_) {
    boundary_ = boundary;
    Detect(boundary - 1);
    const int every = session_.config().migrate_every;
    if (mover_ && every > 0 && boundary % every == 0) MoveRandomRange(boundary - 1);
    if (mover_ && balancer_) Balance(boundary - 1);
  }
}

void Monitor::Detect(int64_t iteration) {
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

void Monitor::Decide(int64_t iteration, const straggler::Detection& d, const char* action) {
  const bool server = d.kind == straggler::Detection::Kind::kServer;
  const int rank = server ? 1 + d.index : WorkerRank(d.index);
  // Predictions come and go with every iteration's noise: the log keeps measured stragglers (the
  // --metrics file keeps every decision).
  LOG_IF(INFO, d.kind != straggler::Detection::Kind::kPredicted || VLOG_IS_ON(1))
      << "iteration " << iteration << ": " << action << " " << (server ? "server " : "worker ")
      << d.index << " (rank " << rank << ") as a " << straggler::KindName(d.kind) << " straggler, "
      << d.ratio << "x";
  if (!metrics_.is_open()) return;
  metrics_ << Format(
      "{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"detector\","
      "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"%s\",\"action\":\"%s\","
      "\"detail\":\"%.3fx the %s\"}\n",
      static_cast<long long>(iteration), session_.SecondsSinceStart(), rank, d.index,
      straggler::KindName(d.kind), action, d.ratio, server ? "median server" : "fastest worker");
  metrics_.flush();
}

void Monitor::MoveRandomRange(int64_t iteration) {
  int64_t keys = 0;
  for (const auto& entry : server_keys_) keys += entry.second;
  // GradientSync numbers its keys 0, 1, 2, ...: a random one of them has a range worth moving.
  const int range =
      mover_->control().RangeOf(rng_() % static_cast<uint64_t>(std::max<int64_t>(1, keys)));
  const int servers = session_.num_servers();
  const int from = mover_->control().OwnerOf(range);
  const int to =
      (from + 1 + static_cast<int>(rng_() % static_cast<uint64_t>(servers - 1))) % servers;
  mover_->Request({"migrate_every", iteration, range, to});
}

void Monitor::Balance(int64_t iteration) {
  std::vector<int> owners;
  for (int range = 0; range < mover_->control().num_ranges(); ++range) {
    owners.push_back(mover_->control().OwnerOf(range));
  }
  const straggler::SasDecision decision = balancer_->Decide(owners);
  if (decision.moves.empty() || !mover_->idle()) return;  // the last plan is still under way
  LOG(INFO) << "iteration " << iteration << ": SAS plans " << decision.moves.size()
            << " range moves, slowest server at " << decision.imbalance << "x the ideal, then "
            << decision.planned << "x";
  if (metrics_.is_open()) {
    metrics_ << Format(
        "{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"sas\","
        "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"plan\",\"action\":\"plan\","
        "\"detail\":\"%zu moves: slowest server %.3fx the ideal, then %.3fx\",\"moves\":%zu,"
        "\"imbalance\":%.4f,\"planned\":%.4f}\n",
        static_cast<long long>(iteration), session_.SecondsSinceStart(),
        1 + decision.moves.front().from, decision.moves.front().from, decision.moves.size(),
        decision.imbalance, decision.planned, decision.moves.size(), decision.imbalance,
        decision.planned);
    metrics_.flush();
  }
  for (const straggler::RangeMove& m : decision.moves) {
    mover_->Request({"sas", iteration, m.range, m.to});
  }
}

void Monitor::Moved(const RangeMover::Order& order, const MigrationControl::Move& move) {
  std::lock_guard<std::mutex> lock(mu_);
  LOG(INFO) << "iteration " << order.iteration << ": moved range " << move.range << " from server "
            << move.from << " to server " << move.to << " (epoch " << move.epoch << ", "
            << move.bytes << " bytes, " << move.pause_s * 1e3 << " ms)";
  if (!metrics_.is_open()) return;
  metrics_ << Format(
      "{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"%s\","
      "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"migration\",\"action\":\"move\","
      "\"detail\":\"range %d from server %d to server %d\",\"range\":%d,\"from\":%d,"
      "\"to\":%d,\"epoch\":%lld,\"bytes\":%lld,\"pause_ms\":%.3f}\n",
      static_cast<long long>(order.iteration), session_.SecondsSinceStart(), order.policy,
      1 + move.to, move.to, move.range, move.from, move.to, move.range, move.from, move.to,
      static_cast<long long>(move.epoch), static_cast<long long>(move.bytes), move.pause_s * 1e3);
  metrics_.flush();
}

}  // namespace pacer
