#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "pacer/dtype.h"
#include "pacer/optimizer_params.h"
#include "pacer/span.h"

namespace pacer {

/// Where a Reducer computes: kCpu (host memory) or kCuda (a CUDA device's memory).
enum class Device : uint8_t { kCpu, kCuda };

/// The gradient hot path: every byte a server receives is summed here once and every update
/// applied once. All operations read each input once and write each output once. Pointers are
/// host memory on the CPU back end and device memory (from Allocate) on the CUDA back end. Counts
/// are in elements; inputs may alias the output (in-place accumulation) but outputs never overlap
/// each other. Bad arguments (null pointers, more than kMaxInputs inputs, optimizer state missing)
/// throw pacer::Error naming what was wrong.
class Reducer {
 public:
  /// The most inputs one Sum takes.
  static constexpr size_t kMaxInputs = 16;

  virtual ~Reducer() = default;
  /// The back end: where pointers passed to it live.
  virtual Device device() const = 0;
  /// The back end and its settings, for logs: for instance "cpu avx512 x2 threads".
  virtual std::string Describe() const = 0;

  /// out = scale * (inputs[0] + ... + inputs[n-1]); inputs may differ in type from each other and
  /// from out. n may be 1 (a scaled copy or cast).
  virtual void Sum(Span<const ConstArray> inputs, MutableArray out, size_t count,
                   float scale = 1.f) = 0;
  /// fp32 <-> fp16/bf16 (any pair of types).
  virtual void Cast(ConstArray in, MutableArray out, size_t count) = 0;
  /// One SGD update of `count` weights by `grad` (see SgdParams). momentum_buf may be null only
  /// when params.momentum == 0.
  virtual void SgdStep(const SgdParams& params, float* weights, float* momentum_buf,
                       ConstArray grad, size_t count) = 0;
  /// One Adam or AdamW update of `count` weights by `grad` (see AdamParams), with `m` and `v` the
  /// first and second moments, updated in place.
  virtual void AdamStep(const AdamParams& params, float* weights, float* m, float* v,
                        ConstArray grad, size_t count) = 0;

  /// Memory the back end's kernels can read: host memory for the CPU, device memory for CUDA.
  /// Free it with Free.
  virtual void* Allocate(size_t bytes) = 0;
  /// Frees memory from Allocate.
  virtual void Free(void* p) = 0;
  /// Copies `bytes` from host memory to back-end memory (from Allocate).
  virtual void CopyIn(void* dst, const void* host_src, size_t bytes) = 0;
  /// Copies `bytes` from back-end memory (from Allocate) to host memory.
  virtual void CopyOut(void* host_dst, const void* src, size_t bytes) = 0;
  /// Waits until every operation issued so far is complete (the CPU back end is synchronous).
  virtual void Synchronize() = 0;
};

/// dst = a + b over `count` floats; dst may be a (in place), never b. b may be unaligned (values
/// straight from a transport's receive buffer). From 1 KiB up the reducer sums (vectorized,
/// multi-threaded when large); below, a plain loop, which costs less than dispatching a tiny sum.
inline void AddFloats(Reducer& reducer, float* dst, const float* a, const float* b, size_t count) {
  constexpr size_t kReducerMinValues = 256;
  if (count < kReducerMinValues) {
    for (size_t i = 0; i < count; ++i) {
      float bi;
      std::memcpy(&bi, b + i, sizeof bi);
      dst[i] = a[i] + bi;
    }
    return;
  }
  const ConstArray inputs[2] = {{a, DType::kF32}, {b, DType::kF32}};
  reducer.Sum(Span<const ConstArray>(inputs, 2), {dst, DType::kF32}, count);
}

/// The CPU back end. threads: 0 = one per core. Operations on fewer than a few hundred KiB run on
/// the calling thread.
std::unique_ptr<Reducer> MakeCpuReducer(int threads = 0);

/// The CUDA back end where it was built and a device answers, else the CPU back end with one log
/// line saying why. `cpu_threads` as for MakeCpuReducer.
std::unique_ptr<Reducer> MakeReducer(Device preferred, int cpu_threads = 0);

}  // namespace pacer
