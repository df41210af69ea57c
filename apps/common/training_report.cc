#include "training_report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace pacer {
namespace bench {

namespace {

bool Bar(const std::string& mode) {
  if (mode == "bar") return true;
  if (mode == "lines") return false;
  if (mode == "auto") return isatty(STDOUT_FILENO);
  throw std::invalid_argument("--progress=" + mode + ": expected auto, bar or lines");
}

}  // namespace

Progress::Progress(bool enabled, const std::string& mode, int64_t total_iterations,
                   int64_t iterations_per_epoch, double samples_per_iteration,
                   const std::string& unit)
    : enabled_(enabled),
      terminal_(Bar(mode) && enabled),
      total_(std::max<int64_t>(1, total_iterations)),
      per_epoch_(std::max<int64_t>(1, iterations_per_epoch)),
      samples_(samples_per_iteration),
      unit_(unit) {}

void Progress::Update(int64_t iteration, double loss, double accuracy) {
  if (!enabled_) return;
  const int64_t done = iteration + 1;
  if (!terminal_ && done < next_line_ && done != total_) return;
  next_line_ = done + std::max<int64_t>(1, total_ / 10);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? done * samples_ / elapsed : 0;
  const double eta = done > 0 ? elapsed * (total_ - done) / done : 0;
  char acc[16] = "  -   ";
  if (accuracy >= 0) std::snprintf(acc, sizeof(acc), "%.4f", accuracy);
  char line[256];
  std::snprintf(line, sizeof(line),
                "epoch %lld  iter %lld/%lld  loss %.4f  acc %s  %.0f %s/s  eta %.0f s",
                static_cast<long long>(iteration / per_epoch_ + 1), static_cast<long long>(done),
                static_cast<long long>(total_), loss, acc, rate, unit_.c_str(), eta);
  if (terminal_) {
    const int width = 24, filled = static_cast<int>(width * done / total_);
    std::printf("\r[%s%s] %s", std::string(filled, '#').c_str(),
                std::string(width - filled, ' ').c_str(), line);
  } else {
    std::printf("%s\n", line);
  }
  std::fflush(stdout);
}

void Progress::Finish() {
  if (terminal_) std::printf("\n");
}

std::string Summary::Json() const {
  char json[512];
  std::snprintf(json, sizeof(json),
                "{\"model\":\"%s\",\"workers\":%d,\"servers\":%d,\"epochs\":%.3f,\"iters\":%lld,"
                "\"accuracy\":%.4f,\"loss\":%.4f,\"time_to_target_s\":%s,\"iter_p50_ms\":%.3f,"
                "\"iter_p99_ms\":%.3f,\"bytes\":%.0f,\"samples_per_s\":%.1f,\"unit\":\"%s\"}",
                model.c_str(), workers, servers, epochs, static_cast<long long>(iterations),
                accuracy, loss,
                time_to_target_s < 0 ? "null" : std::to_string(time_to_target_s).c_str(),
                iter_p50_ms, iter_p99_ms, bytes, samples_per_s, unit.c_str());
  return json;
}

std::string Summary::Text(double target_accuracy) const {
  char text[512];
  std::snprintf(
      text, sizeof(text),
      "%s: %d workers, %d servers, %.2f epochs (%lld iterations)\n"
      "  accuracy %.4f, loss %.4f; time to %.2f accuracy: %s\n"
      "  iteration p50 %.2f ms, p99 %.2f ms (%.1f %s/s); %.1f MB moved\n",
      model.c_str(), workers, servers, epochs, static_cast<long long>(iterations), accuracy, loss,
      target_accuracy,
      time_to_target_s < 0 ? "not reached" : (std::to_string(time_to_target_s) + " s").c_str(),
      iter_p50_ms, iter_p99_ms, samples_per_s, unit.c_str(), bytes / 1e6);
  return text;
}

}  // namespace bench
}  // namespace pacer
