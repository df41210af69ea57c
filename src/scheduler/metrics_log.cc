#include "scheduler/metrics_log.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "pacer/error.h"

namespace pacer {
namespace {

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  va_list args, measure;
  va_start(args, format);
  va_copy(measure, args);
  const int length = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  std::string line(static_cast<size_t>(std::max(length, 0)), '\0');
  std::vsnprintf(line.data(), line.size() + 1, format, args);
  va_end(args);
  return line;
}

// Specs and modes are flag values: only quotes and backslashes need escaping.
std::string JsonEscaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

MetricsLog::MetricsLog(const std::string& path) {
  if (path.empty()) return;
  out_.open(path, std::ios::out | std::ios::trunc);
  if (!out_) throw Error("--metrics=" + path + ": cannot open the file for writing");
  enabled_ = true;
}

void MetricsLog::Write(const std::string& line, bool flush) {
  std::lock_guard<std::mutex> lock(mu_);
  out_ << line;
  if (flush) out_.flush();
}

void MetricsLog::Job(const Config& config, int workers, int servers) {
  if (!enabled()) return;
  // Not through Format: the specs have no bound on their length.
  std::string line =
      Format("{\"type\":\"job\",\"workers\":%d,\"servers\":%d,\"sync\":\"", workers, servers) +
      JsonEscaped(config.sync) + "\",\"inject\":[";
  for (size_t i = 0; i < config.inject.size(); ++i) {
    line += (i == 0 ? "\"" : ",\"") + JsonEscaped(config.inject[i]) + "\"";
  }
  Write(line + "],\"inject_seed\":" + std::to_string(config.inject_seed) + "}\n", true);
}

void MetricsLog::OnIteration(int index, int rank, const IterationReport& r) {
  if (!enabled()) return;
  int64_t latest = latest_clock_.load(std::memory_order_relaxed);
  while (r.clock > latest && !latest_clock_.compare_exchange_weak(latest, r.clock)) {
  }
  Write(Format("{\"type\":\"iter\",\"rank\":%d,\"role\":\"worker\",\"index\":%d,\"iter\":%lld,"
               "\"clock\":%lld,\"t_comp_ms\":%.4f,\"t_push_ms\":%.4f,\"t_pull_ms\":%.4f,"
               "\"t_wait_ms\":%.4f,\"bytes_out\":%lld,\"bytes_in\":%lld,\"batch\":%lld,"
               "\"version\":%lld,\"partner_rank\":%lld,\"tasks\":%lld,\"tasks_moved\":%lld,"
               "\"task_share\":%lld,\"t_start_s\":%.6f}\n",
               rank, index, static_cast<long long>(r.iteration), static_cast<long long>(r.clock),
               r.compute_s * 1e3, r.push_s * 1e3, r.pull_s * 1e3, r.wait_s * 1e3,
               static_cast<long long>(r.bytes_out), static_cast<long long>(r.bytes_in),
               static_cast<long long>(r.batch_size), static_cast<long long>(r.version),
               static_cast<long long>(r.partner), static_cast<long long>(r.tasks),
               static_cast<long long>(r.tasks_transferred), static_cast<long long>(r.task_share),
               r.start_s),
        false);
  // The application evaluated between the iteration before and this one: after `r.iteration`
  // iterations, at about this one's start.
  if (r.accuracy >= 0) {
    Write(Format("{\"type\":\"accuracy\",\"rank\":%d,\"index\":%d,\"after_iters\":%lld,"
                 "\"t_s\":%.6f,\"accuracy\":%.4f}\n",
                 rank, index, static_cast<long long>(r.iteration), r.start_s, r.accuracy),
          false);
  }
}

void MetricsLog::OnServerReport(int index, int rank, const ServerReport& r) {
  if (!enabled()) return;
  Write(Format("{\"type\":\"server\",\"rank\":%d,\"index\":%d,\"t_s\":%.6f,"
               "\"service_us_per_mb\":%.3f,\"queue\":%lld,\"bytes_in\":%lld,\"bytes_out\":%lld,"
               "\"keys\":%lld}\n",
               rank, index, r.t_s, ServiceMicrosPerMb(r), static_cast<long long>(r.queue),
               static_cast<long long>(r.bytes_in), static_cast<long long>(r.bytes_out),
               static_cast<long long>(r.keys)),
        false);
}

void MetricsLog::Detection(int64_t iteration, double t_s, int rank, const straggler::Detection& d,
                           const char* action) {
  if (!enabled()) return;
  const bool server = d.kind == straggler::Detection::Kind::kServer;
  Write(Format("{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"detector\","
               "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"%s\",\"action\":\"%s\","
               "\"detail\":\"%.3fx the %s\"}\n",
               static_cast<long long>(iteration), t_s, rank, d.index, straggler::KindName(d.kind),
               action, d.ratio, server ? "median server" : "fastest worker"),
        true);
}

void MetricsLog::Plan(int64_t iteration, double t_s, const straggler::SasDecision& decision) {
  if (!enabled()) return;
  const int from = decision.moves.front().from;
  Write(Format("{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"sas\","
               "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"plan\",\"action\":\"plan\","
               "\"detail\":\"%zu moves: slowest server %.3fx the ideal, then %.3fx\",\"moves\":%zu,"
               "\"imbalance\":%.4f,\"planned\":%.4f}\n",
               static_cast<long long>(iteration), t_s, 1 + from, from, decision.moves.size(),
               decision.imbalance, decision.planned, decision.moves.size(), decision.imbalance,
               decision.planned),
        true);
}

void MetricsLog::Migration(const char* policy, int64_t iteration, double t_s,
                           const MigrationControl::Move& move) {
  if (!enabled()) return;
  Write(
      Format("{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"%s\","
             "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"migration\",\"action\":\"move\","
             "\"detail\":\"range %d from server %d to server %d\",\"range\":%d,\"from\":%d,"
             "\"to\":%d,\"epoch\":%lld,\"bytes\":%lld,\"pause_ms\":%.3f}\n",
             static_cast<long long>(iteration), t_s, policy, 1 + move.to, move.to, move.range,
             move.from, move.to, move.range, move.from, move.to, static_cast<long long>(move.epoch),
             static_cast<long long>(move.bytes), move.pause_s * 1e3),
      true);
}

void MetricsLog::Stret(int64_t iteration, double t_s, int rank, int partner_rank,
                       const straggler::StretDecision& d, const char* action,
                       const std::string& detail) {
  if (!enabled()) return;
  Write(Format("{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"stret\","
               "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"%s\",\"action\":\"%s\","
               "\"partner_rank\":%d,\"partner_index\":%d,\"detail\":\"%s\"}\n",
               static_cast<long long>(iteration), t_s, rank, d.straggler,
               straggler::StretKindName(d.kind), action, partner_rank, d.partner, detail.c_str()),
        true);
}

void MetricsLog::Sms(int64_t iteration, double t_s, int rank, const straggler::SmsShrink& s,
                     const char* action, const std::string& detail) {
  if (!enabled()) return;
  Write(Format("{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"sms\","
               "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"batch\",\"action\":\"%s\","
               "\"batch\":%d,\"weight\":%.6f,\"predicted_s\":%.6f,\"median_s\":%.6f,"
               "\"skip\":%s,\"slow_link\":%s,"
               "\"detail\":\"%s\"}\n",
               static_cast<long long>(iteration), t_s, rank, s.worker, action, s.batch, s.weight,
               s.predicted_s, s.median_s, s.skip ? "true" : "false", s.slow_link ? "true" : "false",
               detail.c_str()),
        true);
}

void MetricsLog::Sync(int64_t iteration, double t_s, const char* why, const char* action,
                      const std::string& from, const straggler::SyncChoice& choice,
                      double noise_scale, const std::string& detail) {
  if (!enabled()) return;
  std::string table;
  for (const straggler::SyncPrediction& p : choice.table) {
    table += Format(
        "%s{\"mode\":\"%s\",\"time_to_target\":%.6g,\"update_ms\":%.4f,"
        "\"update_batch\":%.4f,\"staleness\":%.4f}",
        table.empty() ? "" : ",", p.mode.c_str(), p.time_to_target, p.update_s * 1e3,
        p.update_batch, p.staleness);
  }
  const std::string noise =
      std::isfinite(noise_scale) ? Format("%.6g", noise_scale) : std::string("null");
  Write(Format("{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"strn\","
               "\"target_rank\":0,\"target_index\":-1,\"kind\":\"sync\",\"action\":\"%s\","
               "\"why\":\"%s\",\"from\":\"%s\",\"mode\":\"%s\",\"noise_scale\":%s,"
               "\"detail\":\"%s\",\"table\":[%s]}\n",
               static_cast<long long>(iteration), t_s, action, why, from.c_str(),
               choice.mode.c_str(), noise.c_str(), JsonEscaped(detail).c_str(), table.c_str()),
        true);
}

void MetricsLog::Exclusion(double t_s, int rank, int index, const std::string& why) {
  if (!enabled()) return;
  Write(Format("{\"type\":\"decision\",\"iter\":%lld,\"t_s\":%.6f,\"policy\":\"liveness\","
               "\"target_rank\":%d,\"target_index\":%d,\"kind\":\"worker_loss\","
               "\"action\":\"exclude\",\"detail\":\"%s\"}\n",
               static_cast<long long>(latest_clock_.load()), t_s, rank, index, why.c_str()),
        true);
}

}  // namespace pacer
