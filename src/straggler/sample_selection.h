#pragma once

#include <cstdint>
#include <vector>

namespace pacer {
namespace straggler {

// SMS's accuracy-aware batch shrink (STRAGGLERS.md section 5): of a batch of
// losses.size() samples, each described by `dim` features (row-major in `features`), keep
// `target` that cover the batch. Greedy farthest-point picks `target` centres by cosine distance
// (the highest-loss sample first), every sample joins its nearest centre, and each cluster is
// represented by its highest-loss member. Returns the kept indices, highest loss first (ties:
// lower index). A sample of zero features is at distance 1 from every other. Throws
// std::invalid_argument naming the sizes for an empty batch, `dim` < 1, features that are not
// batch x dim, a target outside 1..batch, or a loss that is not finite.
std::vector<int> SelectRepresentatives(const std::vector<float>& features, int dim,
                                       const std::vector<float>& losses, int target);

// The comparison: `target` of `batch` samples drawn uniformly without replacement from `seed`, in
// ascending order. Throws std::invalid_argument for a target outside 1..batch.
std::vector<int> DropAtRandom(int batch, int target, uint64_t seed);

}  // namespace straggler
}  // namespace pacer
