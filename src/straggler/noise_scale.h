#pragma once

namespace pacer {
namespace straggler {

// The gradient noise scale B_noise = tr(Sigma) / |G|^2 (McCandlish et al., "An Empirical Model of
// Large-Batch Training", 2018, appendix A), from the squared norms of gradients averaged over a
// small and a big batch: E|g_B|^2 = |G|^2 + tr(Sigma) / B at each size gives both unknowns.
// Iterations to a target then scale as I(B) = 1 + B_noise / B. Returns infinity where the big
// batch's norm leaves no signal (|G|^2 estimated at 0 or below: noise dominates at both sizes),
// and throws std::invalid_argument unless 0 < small_batch < big_batch and the norms are finite
// and not negative.
double NoiseScale(double small_batch, double small_norm2, double big_batch, double big_norm2);

// I(B) = 1 + B_noise / B: the iterations a batch of B needs to reach a target, in units of the
// fewest any batch needs.
inline double IterationsToTarget(double noise_scale, double batch) {
  return 1 + noise_scale / batch;
}

}  // namespace straggler
}  // namespace pacer
