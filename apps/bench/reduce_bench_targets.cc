#include "reduce_bench_targets.h"

#include <cstdio>

namespace pacer::bench {
namespace {

// Bytes of all the buffers an operation touches.
size_t WorkingSet(const Point& p) {
  if (p.op == "sum") return (p.inputs + 1) * p.size;
  if (p.op == "sum_inplace") return p.inputs * p.size;
  if (p.op == "sgd") return 2 * p.size;
  if (p.op == "momentum") return 3 * p.size;
  return 4 * p.size;  // adam
}

const Point* Find(const std::vector<Point>& points, const Point& like, const std::string& op) {
  for (const Point& p : points) {
    if (p.op == op && p.size == like.size && p.threads == like.threads && p.device == like.device) {
      return &p;
    }
  }
  return nullptr;
}

}  // namespace

bool JudgeTargets(const std::vector<Point>& points, size_t last_level_cache_bytes) {
  int judged = 0, met = 0;
  std::printf("# targets (buffers past the %zu MiB last-level cache)\n",
              last_level_cache_bytes >> 20);
  for (const Point& p : points) {
    const bool sum = p.op == "sum" || p.op == "sum_inplace";
    const bool step = p.op == "sgd" || p.op == "momentum" || p.op == "adam";
    if ((!sum && !step) || WorkingSet(p) <= last_level_cache_bytes) continue;
    const bool cuda = p.device == "cuda";
    // A sum is held to a plain loop of its own shape, not to a += b: a machine streams 3 arrays
    // faster than 9 whatever the code, and writing lines it never read costs an out-of-place sum
    // a read of each. The ratio to a += b is printed too.
    const Point* literal = cuda ? nullptr : Find(points, p, "add_loop");
    const Point* standalone = cuda ? Find(points, p, "d2d_copy") : nullptr;
    const std::string ref_name = cuda ? "d2d_copy" : p.ref;
    const double ref_gbps = cuda ? (standalone ? standalone->gbps : 0) : p.ref_gbps;
    if (ref_gbps <= 0) continue;
    const double want = cuda || step ? 0.8 : 0.85;
    const double ratio = p.gbps / ref_gbps;
    ++judged;
    met += ratio >= want;
    std::printf(
        "# %-4s %s threads=%d %-11s x%-2d %-4s %10zu B: %6.2f GB/s = %.2f x %s (target %.2f)",
        ratio >= want ? "MET" : "MISS", p.device.c_str(), p.threads, p.op.c_str(), p.inputs,
        p.dtype.c_str(), p.size, p.gbps, ratio, ref_name.c_str(), want);
    if (sum && literal != nullptr) std::printf(", %.2f x add_loop", p.gbps / literal->gbps);
    std::printf("\n");
  }
  std::printf("# %d of %d judged points met their target\n", met, judged);
  return judged > 0 && met == judged;
}

}  // namespace pacer::bench
