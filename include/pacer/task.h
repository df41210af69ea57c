#pragma once

#include <cstdint>

namespace pacer {

/// One task of an iteration (Falcon, STRAGGLERS.md section 4): a micro-batch with an id, which
/// any worker can compute (every worker reads the whole data set). GradientSync::NextTask hands
/// them out; its data depends on (clock, id) only, whoever computes it.
struct Task {
  /// The iteration it belongs to; under slack synchronization a pioneer may get a task of an
  /// iteration before its own.
  int64_t clock = 0;
  int64_t id = 0;  ///< 0 .. num_workers x tasks_per_worker - 1: which micro-batch
  int owner = 0;   ///< the worker whose share it is
};

}  // namespace pacer
