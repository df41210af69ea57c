#pragma once

#include <cstdint>
#include <vector>

namespace pacer {

/// The samples of a batch to keep when GradientSync asks a predicted straggler to shrink its
/// batch (SMS), and the weight of the gradient computed on them.
struct SelectedSamples {
  std::vector<int> indices;  ///< into the batch, highest loss first (random drop: ascending)
  double weight = 1;         ///< kept / batch: what the shrunk batch's gradient counts for
};

/// SMS's accuracy-aware shrink: `target` representatives of a batch of losses.size() samples,
/// clustered by cosine similarity of `dim` cheap features per sample (row-major in `features`:
/// the inputs, or the previous pass's last hidden layer). Centres are picked farthest-point first
/// (the highest-loss sample first), every sample joins its nearest centre, and each cluster keeps
/// its highest-loss member, so near-duplicate samples are the ones dropped. Pure: no session
/// needed. Throws pacer::Error naming the sizes for mismatched features, a target outside
/// 1..batch or a loss that is not finite.
SelectedSamples SelectSamples(const std::vector<float>& features, int dim,
                              const std::vector<float>& losses, int target);

/// The comparison SMS is measured against: `target` of `batch` samples drawn uniformly, from
/// `seed`.
SelectedSamples DropSamplesAtRandom(int batch, int target, uint64_t seed);

}  // namespace pacer
