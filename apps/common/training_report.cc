#include "training_report.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <stdexcept>

namespace pacer {
namespace bench {

namespace {

// Whether the launching process (the parent) writes to a terminal: under mpirun a rank's stdout is
// a terminal mpirun made, also when mpirun's own output goes to a file.
bool ParentWritesToTerminal() {
  const std::string path = "/proc/" + std::to_string(getppid()) + "/fd/1";
  const int fd = open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return false;
  const bool terminal = isatty(fd);
  close(fd);
  return terminal;
}

bool Bar(const std::string& mode) {
  if (mode == "bar") return true;
  if (mode == "lines") return false;
  if (mode == "auto") return isatty(STDOUT_FILENO) && ParentWritesToTerminal();
  throw std::invalid_argument("--progress=" + mode + ": expected auto, bar or lines");
}

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  return text;
}

// With tasks: each worker's part of them (a straggler a policy relieved computes less than an
// equal split), and how many moved from the worker they were given to.
std::string TaskLine(const std::vector<TaskCount>& tasks) {
  int64_t total = 0, moved = 0;
  for (const TaskCount& t : tasks) {
    total += t.computed;
    moved += t.moved_in;
  }
  if (total == 0) return "";
  std::string line = "  tasks computed:";
  for (size_t i = 0; i < tasks.size(); ++i) {
    line += Format("%s worker %zu %.0f%%", i == 0 ? "" : ",", i, 100.0 * tasks[i].computed / total);
  }
  return line + Format(
                    " (an equal split: %.0f%%); %lld of %lld (%.0f%%) moved from the worker "
                    "given them\n",
                    100.0 / tasks.size(), static_cast<long long>(moved),
                    static_cast<long long>(total), 100.0 * moved / total);
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
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (!terminal_ && elapsed < next_line_s_ && done != total_) return;
  next_line_s_ = elapsed + kLineEverySeconds;
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

std::string Summary::Text() const {
  std::string text =
      Format("%s: %d workers, %d servers, %.2f epochs (%lld iterations)\n", model.c_str(), workers,
             servers, epochs, static_cast<long long>(iterations));
  text += Format("  accuracy %.4f, loss %.4f", accuracy, loss);
  if (time_to_target_s >= 0) {
    text += Format("; %.2f accuracy after %.1f s", target_accuracy, time_to_target_s);
  } else if (target_given) {
    text += Format("; %.2f accuracy not reached", target_accuracy);
  }
  text += Format("\n  iteration p50 %.2f ms, p99 %.2f ms (%.1f %s/s); %.1f MB moved\n", iter_p50_ms,
                 iter_p99_ms, samples_per_s, unit.c_str(), bytes / 1e6);
  for (const std::string& spec : injected) text += "  slowed on purpose: --inject=" + spec + "\n";
  if (!tasks.empty()) text += TaskLine(tasks);
  return text;
}

}  // namespace bench
}  // namespace pacer
