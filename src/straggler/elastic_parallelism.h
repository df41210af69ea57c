#pragma once

#include <cstdint>
#include <vector>

namespace pacer {
namespace straggler {

// Falcon's elastic parallelism (STRAGGLERS.md section 4), as pure logic: each worker's share of
// an iteration's `total` tasks (its parallelism P_i), proportional to its measured capacity so
// that the workers' projected finish times line up, and within the nodes' limits
// [min_share, max_share]. `capacity`: tasks per second per worker; 0 for one not measured yet,
// which counts as the mean of the measured ones (every worker unmeasured: equal shares). The
// shares sum to `total`; rounding goes to the largest remainders, ties to the lower index.
// Throws std::invalid_argument for a negative capacity or limits that cannot hold `total`.
std::vector<int64_t> ElasticShares(const std::vector<double>& capacity, int64_t total,
                                   int64_t min_share, int64_t max_share);

}  // namespace straggler
}  // namespace pacer
