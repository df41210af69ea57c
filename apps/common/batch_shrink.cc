#include "batch_shrink.h"

#include <gflags/gflags.h>
#include <pacer/sample_selection.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

// Random is the default: on pacer-resnet, dedup's picks trained to lower accuracy than random
// drop's at the same size (docs/STRAGGLERS.md).
DEFINE_string(shrink_select, "random",
              "which samples a shrunk batch keeps: random, or dedup (one per cluster of similar "
              "samples, highest loss first, where the model offers features)");

DEFINE_string(shrink, "",
              "WORKER:SIZE: that worker runs SIZE samples of every --batch, chosen by "
              "--shrink-select (a fixed shrink, to compare selections)");

namespace pacer {
namespace apps {
namespace {

struct Shrink {
  int worker = -1, size = 0;
};

// --shrink as parsed; throws std::invalid_argument unless it is empty or WORKER:SIZE.
Shrink ParseShrink() {
  Shrink shrink;
  if (FLAGS_shrink.empty()) return shrink;
  int used = 0;
  if (std::sscanf(FLAGS_shrink.c_str(), "%d:%d%n", &shrink.worker, &shrink.size, &used) != 2 ||
      used != static_cast<int>(FLAGS_shrink.size())) {
    throw std::invalid_argument("--shrink=" + FLAGS_shrink + ": expected WORKER:SIZE");
  }
  return shrink;
}

}  // namespace

std::vector<int> ShrinkSizes(int batch) {
  const int step = std::max(1, batch / 8);
  std::vector<int> sizes;
  for (int size = step; size <= batch; size += step) sizes.push_back(size);
  if (sizes.back() != batch) sizes.push_back(batch);
  return sizes;
}

void CheckShrinkFlags(int workers, int batch, bool tasks) {
  if (FLAGS_shrink_select != "dedup" && FLAGS_shrink_select != "random") {
    throw std::invalid_argument("--shrink-select=" + FLAGS_shrink_select +
                                ": expected dedup or random");
  }
  const Shrink shrink = ParseShrink();
  if (!FLAGS_shrink.empty() &&
      (shrink.worker < 0 || shrink.worker >= workers || shrink.size < 1 || shrink.size > batch)) {
    throw std::invalid_argument("--shrink=" + FLAGS_shrink + ": expected a worker of 0.." +
                                std::to_string(workers - 1) + " and a size of 1.." +
                                std::to_string(batch));
  }
  if (!FLAGS_shrink.empty() && tasks) {
    throw std::invalid_argument("--shrink=" + FLAGS_shrink +
                                " with --tasks: tasks set their own sizes and weights");
  }
}

int FixedShrink(int worker, int batch) {
  const Shrink shrink = ParseShrink();
  return shrink.worker == worker ? shrink.size : batch;
}

std::vector<size_t> ShrinkRows(Workload& model, const std::vector<size_t>& rows, int target,
                               uint64_t seed) {
  std::vector<float> features, losses;
  int dim = 0;
  const SelectedSamples kept =
      FLAGS_shrink_select == "dedup" && model.Describe(rows, &features, &dim, &losses)
          ? SelectSamples(features, dim, losses, target)
          : DropSamplesAtRandom(static_cast<int>(rows.size()), target, seed);
  std::vector<size_t> shrunk;
  for (int i : kept.indices) shrunk.push_back(rows[i]);
  return shrunk;
}

}  // namespace apps
}  // namespace pacer
