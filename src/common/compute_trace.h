#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pacer {

// Per-worker compute times recorded in production, to replay as the workers' compute
// (--inject=trace:PATH): a CSV with a header naming the columns `worker` (0, 1, ...), `time` (the
// iteration sampled) and `batch_time_norm` (the worker's mini-batch time, in any unit), as
// Alibaba PAI's traces in ../shared/traces/pai-2020-minibatch/ are; other columns are ignored.
// Samples may be sparse: between two, a worker keeps its last sampled time.
class ComputeTrace {
 public:
  // Throws pacer::Error naming the file, line and column of what is wrong: a missing column, a
  // field that is not a number, a negative worker, iteration or time, a worker with no samples.
  static ComputeTrace Load(const std::string& path);
  // The same over `text`, the contents of a file named `name`.
  static ComputeTrace Parse(const std::string& text, const std::string& name);

  int workers() const { return static_cast<int>(samples_.size()); }
  // Trace worker `worker`'s time at trace iteration `iteration`: its last sample at or before it
  // (its first sample, before that).
  double TimeAt(int worker, int64_t iteration) const;
  // The fastest trace worker's time at `iteration`.
  double FastestAt(int64_t iteration) const;
  // The median of every sample.
  double median() const { return median_; }

 private:
  std::vector<std::vector<std::pair<int64_t, double>>> samples_;  // by worker, by iteration
  double median_ = 0;
};

}  // namespace pacer
