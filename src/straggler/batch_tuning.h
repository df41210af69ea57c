#pragma once

#include <map>
#include <vector>

namespace pacer {
namespace straggler {

// What one worker's iteration costs: compute seconds by batch size, as measured, and the seconds
// that do not grow with the batch (pushing and pulling).
struct BatchProfile {
  int worker = 0;
  std::map<int, double> compute_s;  // batch size -> compute seconds; at least one entry
  double fixed_s = 0;
  // Seconds at `batch`: a measured size as measured, another in proportion to the nearest
  // measured size (compute is linear in the samples between measured points).
  double Seconds(int batch) const;
};

struct TunedBatch {
  int worker;
  int batch;
  double weight;                // batch over the sum of the tuned batches: the weights sum to 1
  bool skip_unchanged = false;  // SMS's skip (STRET's tuning never skips)
};

// STRET's one-time batch tuning (STRAGGLERS.md section 6): every worker gets the largest batch
// size of `allowed` whose iteration time is within `tolerance` of the fastest worker's at
// `nominal` (the smallest allowed size if none is), and the gradients are weighted by their share
// of the samples. Workers as fast as the fastest keep `nominal`. Throws std::invalid_argument for
// an empty `allowed`, a nominal size not in it, or a profile without measurements.
std::vector<TunedBatch> TuneBatches(const std::vector<BatchProfile>& profiles,
                                    const std::vector<int>& allowed, int nominal,
                                    double tolerance = 0.05);

}  // namespace straggler
}  // namespace pacer
