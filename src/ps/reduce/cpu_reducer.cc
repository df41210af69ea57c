#include "ps/reduce/cpu_reducer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "common/huge_pages.h"
#include "pacer/error.h"
#include "ps/reduce/operand_checks.h"
#include "ps/reduce/thread_pool.h"

namespace pacer::reduce {
namespace {

// Below this many bytes touched, an operation runs on the calling thread: waking the pool costs
// more than it saves.
constexpr size_t kMinBytesPerThread = 512 * 1024;
// Outputs at least this large that alias no input are written with non-temporal stores, which
// skip reading each line before writing it (a third less traffic for a two-input sum).
constexpr size_t kStreamOutputBytes = 4 << 20;
// Thread ranges start on multiples of this many elements: whole cache lines for every type.
constexpr size_t kPartAlignment = 64;

int DefaultThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

class CpuReducer final : public Reducer {
 public:
  CpuReducer(int threads, const KernelTable& kernels)
      : kernels_(kernels), pool_(threads > 0 ? threads : DefaultThreads()) {}

  Device device() const override { return Device::kCpu; }

  std::string Describe() const override {
    std::ostringstream s;
    s << "cpu " << kernels_.isa << ", " << pool_.threads() << " thread"
      << (pool_.threads() == 1 ? "" : "s");
    return s.str();
  }

  void Sum(Span<const ConstArray> inputs, MutableArray out, size_t count, float scale) override {
    CheckSumOperands(inputs, out, count);
    SumJob job;
    job.inputs = static_cast<int>(inputs.size());
    size_t bytes = count * SizeOf(out.type);
    bool aliased = false;
    for (size_t j = 0; j < inputs.size(); ++j) {
      job.in[j] = inputs[j].data;
      job.in_type[j] = inputs[j].type;
      bytes += count * SizeOf(inputs[j].type);
      aliased |= inputs[j].data == out.data;
    }
    job.out = out.data;
    job.out_type = out.type;
    job.scale = scale;
    job.stream_out = !aliased && count * SizeOf(out.type) >= kStreamOutputBytes;
    ForRanges(count, bytes, [&](size_t b, size_t e) { kernels_.sum(job, b, e); });
  }

  void Cast(ConstArray in, MutableArray out, size_t count) override {
    Sum(Span<const ConstArray>(&in, 1), out, count, 1.f);  // times one is exact
  }

  void SgdStep(const SgdParams& params, float* weights, float* momentum_buf, ConstArray grad,
               size_t count) override {
    CheckSgdOperands(params, weights, momentum_buf, grad, count);
    const bool momentum = params.momentum != 0.f;
    SgdJob job{params, weights, momentum_buf, grad};
    const size_t bytes = count * ((momentum ? 16 : 8) + SizeOf(grad.type));
    ForRanges(count, bytes, [&](size_t b, size_t e) { kernels_.sgd(job, b, e); });
  }

  void AdamStep(const AdamParams& params, float* weights, float* m, float* v, ConstArray grad,
                size_t count) override {
    CheckAdamOperands(params, weights, m, v, grad, count);
    AdamJob job;
    job.params = params;
    const double t = static_cast<double>(params.step);
    job.inv_bias1 = static_cast<float>(1.0 / (1.0 - std::pow(double{params.beta1}, t)));
    job.inv_bias2 = static_cast<float>(1.0 / (1.0 - std::pow(double{params.beta2}, t)));
    job.weights = weights;
    job.m = m;
    job.v = v;
    job.grad = grad;
    const size_t bytes = count * (24 + SizeOf(grad.type));
    ForRanges(count, bytes, [&](size_t b, size_t e) { kernels_.adam(job, b, e); });
  }

  // Large buffers on transparent huge pages: hardware prefetchers stop at page boundaries, and a
  // sum over many 4 KiB-paged inputs restarts every stream each 4 KiB.
  void* Allocate(size_t bytes) override {
    void* p = bytes >= kHugePageBytes
                  ? AllocateOnHugePages(bytes)
                  : std::aligned_alloc(64, std::max<size_t>((bytes + 63) / 64 * 64, 64));
    if (p == nullptr) throw Error("CPU reducer: cannot allocate " + std::to_string(bytes) + " B");
    return p;
  }
  void Free(void* p) override { std::free(p); }
  void CopyIn(void* dst, const void* host_src, size_t bytes) override {
    std::memcpy(dst, host_src, bytes);
  }
  void CopyOut(void* host_dst, const void* src, size_t bytes) override {
    std::memcpy(host_dst, src, bytes);
  }
  void Synchronize() override {}

 private:
  // Splits [0, count) into one range per thread, each worth at least kMinBytesPerThread.
  template <typename Kernel>
  void ForRanges(size_t count, size_t bytes, Kernel kernel) {
    const size_t parts = std::clamp<size_t>(bytes / kMinBytesPerThread, 1, pool_.threads());
    if (parts == 1) {
      kernel(0, count);
      return;
    }
    const size_t per_part =
        ((count + parts - 1) / parts + kPartAlignment - 1) / kPartAlignment * kPartAlignment;
    auto run_part = [&](int part) {
      const size_t begin = std::min(count, part * per_part);
      kernel(begin, std::min(count, begin + per_part));
    };
    pool_.Run(static_cast<int>(parts), run_part);
  }

  const KernelTable& kernels_;
  ThreadPool pool_;
};

}  // namespace

std::unique_ptr<Reducer> MakeCpuReducer(int threads, const KernelTable& kernels) {
  return std::make_unique<CpuReducer>(threads, kernels);
}

}  // namespace pacer::reduce

namespace pacer {

// PACER_CPU_ISA=portable|avx2|avx512 caps the instruction set (to compare them, or to rule one
// out); by default the best this CPU has runs.
std::unique_ptr<Reducer> MakeCpuReducer(int threads) {
  const std::vector<const reduce::KernelTable*> tables = reduce::SupportedKernels();
  const char* cap = std::getenv("PACER_CPU_ISA");
  for (auto it = tables.rbegin(); cap != nullptr && it != tables.rend(); ++it) {
    if (std::string((*it)->isa) == cap) return reduce::MakeCpuReducer(threads, **it);
  }
  return reduce::MakeCpuReducer(threads, *tables.back());
}

}  // namespace pacer
