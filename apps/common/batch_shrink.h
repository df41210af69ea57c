#pragma once

#include <cstdint>
#include <vector>

#include "training_job.h"

namespace pacer {
namespace apps {

// The batch sizes a worker can be ordered to run (STRET's tuning, SMS's shrink) without tasks:
// multiples of an eighth of `batch`.
std::vector<int> ShrinkSizes(int batch);

// Throws std::invalid_argument naming the flag for a --shrink-select other than dedup or random,
// or a --shrink that is not WORKER:SIZE with a worker of the job and 1 <= SIZE <= `batch`, or
// one given with `tasks` (tasks set their own sizes and weights).
void CheckShrinkFlags(int workers, int batch, bool tasks);

// --shrink=W:B: worker W runs B samples of every batch (a fixed b', to compare selections at the
// same size; its gradient weighted by its share); `batch` for every other worker, or without the
// flag.
int FixedShrink(int worker, int batch);

// The `target` of `rows` a worker ordered to a smaller batch computes. --shrink-select=random
// (the default), or a model without features: DropSamplesAtRandom from `seed`, so a resumed run
// drops the same; dedup: SelectSamples on the model's features and losses (one per cluster of
// similar samples, highest loss first).
std::vector<size_t> ShrinkRows(Workload& model, const std::vector<size_t>& rows, int target,
                               uint64_t seed);

}  // namespace apps
}  // namespace pacer
