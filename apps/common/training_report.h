#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace pacer {
namespace bench {

// What an app's worker 0 shows while it trains: a progress bar (epoch, iteration, loss, accuracy,
// throughput, ETA) rewritten in place on a terminal, a plain line every 5 s otherwise (a log or a
// file would get the bar's every redraw on one line).
class Progress {
 public:
  // `mode`: "bar", "lines", or "auto": a bar when the output reaches a terminal, that is when
  // stdout is one and so is the launcher's (under mpirun a rank's stdout is a terminal mpirun
  // made, also when mpirun writes to a file).
  // `samples_per_iteration` over all workers; `unit`: what a sample is ("img", "tok").
  Progress(bool enabled, const std::string& mode, int64_t total_iterations,
           int64_t iterations_per_epoch, double samples_per_iteration, const std::string& unit);
  // After iteration `iteration` (from 0): its loss and the latest accuracy (< 0: none yet).
  void Update(int64_t iteration, double loss, double accuracy);
  void Finish();

 private:
  const bool enabled_, terminal_;
  const int64_t total_, per_epoch_;
  const double samples_;
  const std::string unit_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  static constexpr double kLineEverySeconds = 5;
  double next_line_s_ = 0;
};

// A worker's tasks over the run (GradientSync::UseTasks): those it computed, of which other
// workers' (moved to it), and its own share.
struct TaskCount {
  int64_t computed = 0, moved_in = 0, share = 0;
};

// An app's final summary (printed, and --json).
struct Summary {
  std::string model;
  int workers = 0, servers = 0;
  double epochs = 0;
  int64_t iterations = 0;
  double accuracy = 0, loss = 0;
  double time_to_target_s = -1;  // < 0: not reached
  double target_accuracy = 0;
  bool target_given = false;  // --target-acc was set: "not reached" is news then
  double iter_p50_ms = 0, iter_p99_ms = 0, bytes = 0;
  double samples_per_s = 0;           // over all workers, at the median iteration
  std::string unit = "samples";       // what samples_per_s counts: "img", "tok"
  std::vector<std::string> injected;  // the --inject specs (and --scenario's)
  std::vector<TaskCount> tasks;       // by worker, with tasks; empty without

  std::string Json() const;
  // What ran, how fast, which workers were slowed on purpose and, with tasks, what moved.
  std::string Text() const;
};

}  // namespace bench
}  // namespace pacer
