#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pacer {
namespace bench {

// What an app's worker 0 shows while it trains: a progress bar (epoch, iteration, loss, accuracy,
// throughput, ETA) rewritten in place on a terminal, a plain line every 10% otherwise.
class Progress {
 public:
  // `mode`: "bar", "lines", or "auto" (a bar when stdout is a terminal; under mpirun a rank's
  // stdout is a terminal even when mpirun's is a file, so logs want "lines").
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
  int64_t next_line_ = 0;
};

// An app's final summary, as the issue's --json names it.
struct Summary {
  std::string model;
  int workers = 0, servers = 0;
  double epochs = 0;
  int64_t iterations = 0;
  double accuracy = 0, loss = 0;
  double time_to_target_s = -1;  // < 0: not reached
  double iter_p50_ms = 0, iter_p99_ms = 0, bytes = 0;
  double samples_per_s = 0;      // over all workers, at the median iteration
  std::string unit = "samples";  // what samples_per_s counts: "img", "tok"

  std::string Json() const;
  std::string Text(double target_accuracy) const;
};

}  // namespace bench
}  // namespace pacer
