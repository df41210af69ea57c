#pragma once

#include <cstdint>

namespace pacer {

/// What one iteration cost a worker, from BeginIteration to EndIteration. The scheduler receives
/// it too (telemetry, and `--metrics`), as bytes: every field is 8 bytes wide, so no padding goes
/// over the wire. Times are in seconds.
struct IterationStats {
  int64_t iteration = 0;  ///< this worker's count of iterations, from 0
  int64_t clock = 0;      ///< the iteration's clock
  double start_s = 0;     ///< BeginIteration, in seconds since the session began
  double total_s = 0;     ///< BeginIteration to EndIteration
  double compute_s = 0;   ///< BeginIteration to the last PushPull (or to EndIteration)
  double push_s = 0;      ///< the first push sent to the last one acknowledged
  double pull_s = 0;      ///< the last push acknowledged to the last parameters received
  double wait_s = 0;      ///< blocked in Wait, WaitAll and EndIteration
  int64_t tasks = 0;      ///< with tasks (GradientSync::UseTasks): the tasks this worker computed
  int64_t tasks_transferred = 0;  ///< with tasks: of those, other workers' (task transfer)
  int64_t task_share = 0;         ///< with tasks: this worker's own share of the tasks
  double task_wait_s = 0;  ///< with tasks: the time NextTask waited for the scheduler's grants
  int64_t bytes_out = 0;   ///< gradients sent
  int64_t bytes_in = 0;    ///< parameters received
  /// Tensors (keys) sent as "same as last" instead of their values (SMS's skip).
  int64_t pushes_skipped = 0;
  int64_t bytes_skipped = 0;  ///< the gradient bytes those did not send
  /// Tensors (keys) whose parameters a server answered "unchanged": the ones it last sent stand
  /// for them (SMS's skip, --skip_pull_eps).
  int64_t pulls_unchanged = 0;
  int64_t batch_size = 0;  ///< the batch size run (see GradientSync::batch_size)
  int64_t version = 0;     ///< lowest parameter version received
  /// Under --sync=auto: the squared norm of the gradients pushed, as the application passed them
  /// (STRN's gradient noise scale compares it between batch sizes); else 0.
  double gradient_norm2 = 0;
};

}  // namespace pacer
