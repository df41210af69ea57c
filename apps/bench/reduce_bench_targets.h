#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pacer::bench {

// One measured point of pacer-reduce-bench.
struct Point {
  std::string op;  // sum, sum_inplace, sgd, momentum, adam, or a reference: memcpy, add_loop,
                   // add3_loop, d2d_copy, cublas_sum (plain_sum is only ever a point's `ref`)
  int inputs = 1;
  std::string dtype;
  size_t size = 0;  // bytes of one input buffer
  double gbps = 0;  // bytes read + written, 1e9 B/s
  std::string device;
  int threads = 1;
  std::string ref;      // CPU: the reference loop timed in alternation with this point
  double ref_gbps = 0;  // and its GB/s over the same stretch of time
};

// The targets, each against a reference measured at the same size and threads in the
// same run (on the CPU, timed in alternation with the point itself), on points whose buffers
// together exceed the last-level cache: CPU sums >= 0.85 x a plain loop of the same shape (same
// inputs, in place or not), optimizer steps >= 0.8 x the `a += b` loop; CUDA sums >= 0.8 x a
// device-to-device copy. Prints one verdict line per point and a summary; returns whether every
// judged point met its target.
bool JudgeTargets(const std::vector<Point>& points, size_t last_level_cache_bytes);

}  // namespace pacer::bench
