#pragma once

#include <cstddef>

namespace pacer::bench {

// The CPU ceilings pacer-reduce-bench compares the Reducer with, measured in the same run: what a
// memcpy and plain `a[i] += b[i]` and `c[i] = a[i] + b[i]` loops achieve on `threads` threads
// (OpenMP, static split). Each runs once; the caller times it.
void ParallelMemcpy(float* dst, const float* src, size_t count, int threads);
void ParallelAddLoop(float* a, const float* b, size_t count, int threads);
void ParallelAddToThirdLoop(float* c, const float* a, const float* b, size_t count, int threads);
// out = scale * (inputs[0] + ... + inputs[n-1]) as a plain loop with n (1..16) fixed when
// compiling: the same shape as a Reducer sum, in place when out is inputs[0].
void ParallelPlainSum(float* out, const float* const* inputs, int n, float scale, size_t count,
                      int threads);

}  // namespace pacer::bench
