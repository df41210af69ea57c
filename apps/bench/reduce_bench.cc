// Bandwidth of the Reducer's operations next to the machine's own ceilings, measured in the same
// run, printed like nccl-tests:
//
//   build/bin/pacer-reduce-bench --device=cpu --inputs=2,4,8 --sizes=1MB..256MB --threads=1,all
//
// GB/s counts bytes read plus bytes written (1e9 B). `size` is the bytes of one input buffer. The
// references: memcpy and plain `a[i] += b[i]` (add_loop) and `c[i] = a[i] + b[i]` (add3_loop)
// loops on the same threads, and for each sum a plain loop of its shape (plain_sum: same inputs,
// in place or not) timed in alternation with it (CPU); a device-to-device copy and cuBLAS's sum
// (CUDA). With --targets
// the run ends with the targets judged on the points whose buffers are past the last-level
// cache, and exits 1 if one is missed.
#include <gflags/gflags.h>
#include <pacer/error.h>
#include <pacer/reducer.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cpu_bandwidth.h"
#include "list_flag.h"
#include "reduce_bench_targets.h"
#ifdef PACER_HAVE_CUDA
#include "reduce_bench_cuda.h"
#endif

DEFINE_string(device, "cpu", "cpu or cuda");
DEFINE_string(inputs, "2,4,8", "input counts of the N-way sums");
DEFINE_string(sizes, "1MB..256MB", "bytes per input buffer: a list, or A..B in steps of 4x");
DEFINE_string(threads, "1,all", "CPU threads per operation (all = one per core)");
DEFINE_string(dtypes, "f32,bf16", "element types of the sums' inputs and output");
DEFINE_string(ops, "sum,sum_inplace,sgd,momentum,adam", "operations to measure");
DEFINE_string(json, "", "also write every point to this file as a JSON array");
DEFINE_double(min_seconds, 0.2, "time spent per point, at least 3 repetitions");
DEFINE_bool(targets, false, "judge the issue's targets at the end (exit 1 if one is missed)");
DEFINE_int64(llc_bytes, 0,
             "last-level cache the targets' sizes must exceed; 0 asks sysconf (on a VM this can be "
             "the host's whole cache: pass the measured cliff instead)");

namespace pacer::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Median seconds of one run of `op` and, when given, of `reference`, after a warm-up run of each,
// repeated for --min_seconds. The two are timed in alternation so that both see the same machine:
// a shared VM's memory bandwidth drifts within seconds.
std::pair<double, double> MedianSeconds(const std::function<void()>& op,
                                        const std::function<void()>* reference, Reducer& reducer) {
  auto time = [&](const std::function<void()>& run) {
    const auto start = Clock::now();
    run();
    reducer.Synchronize();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  time(op);
  if (reference != nullptr) time(*reference);
  std::vector<double> op_times, ref_times;
  double total = 0;
  while (op_times.size() < 3 || total < FLAGS_min_seconds) {
    op_times.push_back(time(op));
    total += op_times.back();
    if (reference != nullptr) ref_times.push_back(time(*reference));
  }
  auto median = [](std::vector<double>& v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  return {median(op_times), median(ref_times)};
}

// Buffers in the reducer's memory, filled with small non-zero values, freed on destruction.
class Buffers {
 public:
  static constexpr uint8_t kFillByte = 0x3c;  // 0x3c3c.. is a small normal number in every type

  Buffers(Reducer& reducer, size_t count, size_t bytes) : reducer_(reducer) {
    const std::vector<uint8_t> fill(bytes, kFillByte);
    for (size_t i = 0; i < count; ++i) {
      data_.push_back(reducer.Allocate(bytes));
      reducer.CopyIn(data_.back(), fill.data(), bytes);
    }
  }
  ~Buffers() {
    for (void* p : data_) reducer_.Free(p);
  }
  void* operator[](size_t i) const { return data_[i]; }

 private:
  Reducer& reducer_;
  std::vector<void*> data_;
};

// A reference loop timed in alternation with a point: its name, body and bytes moved.
struct Reference {
  std::string name;
  const std::function<void()>* run = nullptr;
  size_t bytes = 0;
};

class Runner {
 public:
  Runner(Reducer& reducer, int threads) : reducer_(reducer), threads_(threads) {}

  void RunSize(size_t size, std::vector<Point>* points) {
    const size_t floats = size / 4;
    Buffers ref(reducer_, 3, size);
    if (reducer_.device() == Device::kCpu) {
      float* a = static_cast<float*>(ref[0]);
      const float* b = static_cast<const float*>(ref[1]);
      float* c = static_cast<float*>(ref[2]);
      add_loop_ = [=] { ParallelAddLoop(a, b, floats, threads_); };
      Add(points, "memcpy", 1, "f32", size, 2 * size,
          [&] { ParallelMemcpy(a, b, floats, threads_); });
      Add(points, "add_loop", 2, "f32", size, 3 * size, add_loop_);
      Add(points, "add3_loop", 2, "f32", size, 3 * size,
          [&] { ParallelAddToThirdLoop(c, a, b, floats, threads_); });
    } else {
#ifdef PACER_HAVE_CUDA
      Record(points, At("d2d_copy", 1, "f32", size, CudaDeviceCopyGBps(size, 20)));
      for (const std::string& n : SplitList(FLAGS_inputs)) {
        Record(points, At("cublas_sum", std::stoi(n), "f32", size,
                          CudaCublasSumGBps(std::stoi(n), size, 20)));
      }
#endif
    }
    for (const std::string& op : SplitList(FLAGS_ops)) {
      if (op == "sum" || op == "sum_inplace") {
        for (const std::string& type_name : SplitList(FLAGS_dtypes)) {
          for (const std::string& n : SplitList(FLAGS_inputs)) {
            RunSum(op == "sum_inplace", ParseDType(type_name), std::stoi(n), size, points);
          }
        }
      } else {
        RunOptimizer(op, size, points);
      }
    }
  }

 private:
  void RunSum(bool in_place, DType type, int n, size_t size, std::vector<Point>* points) {
    const size_t count = size / SizeOf(type);
    Buffers buffers(reducer_, n + 1, size);
    std::vector<ConstArray> inputs;
    for (int j = 0; j < n; ++j) inputs.push_back({buffers[j], type});
    const MutableArray out{in_place ? buffers[0] : buffers[n], type};
    // The plain loop of the same shape, on as many bytes of its own (fp32 whatever the type).
    Buffers plain_buffers(reducer_, n + 1, size);
    std::vector<const float*> plain_inputs;
    for (int j = 0; j < n; ++j) plain_inputs.push_back(static_cast<const float*>(plain_buffers[j]));
    float* plain_out = static_cast<float*>(in_place ? plain_buffers[0] : plain_buffers[n]);
    const std::function<void()> plain = [&] {
      ParallelPlainSum(plain_out, plain_inputs.data(), n, 1.f / n, size / 4, threads_);
    };
    // Scaling by 1/n makes the sum a mean of equal values: the output must equal the fill value
    // however often the sum repeats in place, which CheckMean verifies.
    Add(
        points, in_place ? "sum_inplace" : "sum", n, NameOf(type), size, (n + 1) * size,
        [&] { reducer_.Sum(inputs, out, count, 1.f / n); },
        Reference{"plain_sum", &plain, (n + 1) * size});
    CheckMean(out, count);
  }

  // Fast and wrong is not a result: 4096 elements spread over the output, the first and the last
  // among them, must hold the fill value.
  void CheckMean(const MutableArray& out, size_t count) {
    const size_t bytes = SizeOf(out.type);
    std::vector<uint8_t> fill(bytes, Buffers::kFillByte), got(bytes);
    const double want = ToDouble(fill.data(), out.type);
    const size_t samples = std::min<size_t>(count, 4096);
    for (size_t s = 0; s < samples; ++s) {
      const size_t i = samples == 1 ? 0 : s * (count - 1) / (samples - 1);
      reducer_.CopyOut(got.data(), static_cast<const uint8_t*>(out.data) + i * bytes, bytes);
      const double value = ToDouble(got.data(), out.type);
      if (!(std::abs(value - want) <= 1e-2 * want)) {
        throw Error("sum of " + std::string(NameOf(out.type)) + " element " + std::to_string(i) +
                    " is " + std::to_string(value) + ", expected " + std::to_string(want));
      }
    }
  }

  static double ToDouble(const uint8_t* p, DType type) {
    if (type == DType::kF32) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return type == DType::kF16 ? F16ToFloat(h) : Bf16ToFloat(h);
  }

  void RunOptimizer(const std::string& op, size_t size, std::vector<Point>* points) {
    const size_t count = size / 4;
    Buffers b(reducer_, 4, size);
    float* w = static_cast<float*>(b[0]);
    const ConstArray grad{b[1], DType::kF32};
    float* m = static_cast<float*>(b[2]);
    float* v = static_cast<float*>(b[3]);
    if (op == "sgd" || op == "momentum") {
      SgdParams p;
      p.momentum = op == "momentum" ? 0.9f : 0.f;
      Add(
          points, op, 1, "f32", size, (op == "sgd" ? 3 : 5) * size,
          [&] { reducer_.SgdStep(p, w, m, grad, count); }, AddLoop(size));
    } else if (op == "adam") {
      AdamParams p;
      Add(
          points, op, 1, "f32", size, 7 * size, [&] { reducer_.AdamStep(p, w, m, v, grad, count); },
          AddLoop(size));
    } else {
      throw Error("unknown op '" + op + "'");
    }
  }

  Reference AddLoop(size_t size) const { return {"add_loop", &add_loop_, 3 * size}; }

  // Measures `run`, moving `bytes_moved`, and on the CPU `ref` in alternation with it.
  void Add(std::vector<Point>* points, const std::string& op, int inputs, const std::string& dtype,
           size_t size, size_t bytes_moved, const std::function<void()>& run,
           const Reference& ref = {}) {
    const bool with_ref = reducer_.device() == Device::kCpu && ref.run != nullptr;
    const auto [op_s, ref_s] = MedianSeconds(run, with_ref ? ref.run : nullptr, reducer_);
    Point p = At(op, inputs, dtype, size, bytes_moved / op_s / 1e9);
    if (with_ref) {
      p.ref = ref.name;
      p.ref_gbps = ref.bytes / ref_s / 1e9;
    }
    Record(points, p);
  }

  static Point At(const std::string& op, int inputs, const std::string& dtype, size_t size,
                  double gbps) {
    Point p;
    p.op = op;
    p.inputs = inputs;
    p.dtype = dtype;
    p.size = size;
    p.gbps = gbps;
    return p;
  }

  void Record(std::vector<Point>* points, Point p) {
    p.device = reducer_.device() == Device::kCpu ? "cpu" : "cuda";
    p.threads = threads_;
    std::printf("%6s %7d %12s %6d %6s %12zu %9.2f", p.device.c_str(), p.threads, p.op.c_str(),
                p.inputs, p.dtype.c_str(), p.size, p.gbps);
    if (!p.ref.empty()) {
      std::printf("  %9.2f %-9s %5.2f", p.ref_gbps, p.ref.c_str(), p.gbps / p.ref_gbps);
    }
    std::printf("\n");
    std::fflush(stdout);
    points->push_back(p);
  }

  Reducer& reducer_;
  int threads_;
  std::function<void()> add_loop_;  // the CPU reference of the optimizer steps at this size
};

void WriteJson(const std::string& path, const std::vector<Point>& points) {
  std::ofstream out(path);
  out << "[\n";
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    out << "  {\"device\":\"" << p.device << "\",\"op\":\"" << p.op << "\",\"inputs\":" << p.inputs
        << ",\"dtype\":\"" << p.dtype << "\",\"size\":" << p.size << ",\"threads\":" << p.threads
        << ",\"gbps\":" << p.gbps;
    if (!p.ref.empty()) out << ",\"ref\":\"" << p.ref << "\",\"ref_gbps\":" << p.ref_gbps;
    out << "}" << (i + 1 < points.size() ? ",\n" : "\n");
  }
  out << "]\n";
}

size_t LastLevelCacheBytes() {
  if (FLAGS_llc_bytes > 0) return static_cast<size_t>(FLAGS_llc_bytes);
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return static_cast<size_t>(l3);
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? static_cast<size_t>(l2) : size_t{32} << 20;
}

int Main() {
  const bool cuda = FLAGS_device == "cuda";
  if (!cuda && FLAGS_device != "cpu") throw Error("--device must be cpu or cuda");
  std::vector<Point> points;
  std::printf("# %6s %7s %12s %6s %6s %12s %9s  %9s %-9s %5s\n", "device", "threads", "op",
              "inputs", "dtype", "size(B)", "GB/s", "ref GB/s", "ref", "ratio");
  for (const std::string& t : SplitList(cuda ? "1" : FLAGS_threads)) {
    const int threads =
        t == "all" ? static_cast<int>(std::thread::hardware_concurrency()) : std::stoi(t);
    std::unique_ptr<Reducer> reducer = cuda ? MakeReducer(Device::kCuda) : MakeCpuReducer(threads);
    if (cuda && reducer->device() != Device::kCuda) throw Error("no usable CUDA device");
    std::printf("# %s\n", reducer->Describe().c_str());
    Runner runner(*reducer, threads);
    for (size_t size : ParseSizes(FLAGS_sizes)) runner.RunSize(size, &points);
  }
  if (!FLAGS_json.empty()) WriteJson(FLAGS_json, points);
  return FLAGS_targets && !JudgeTargets(points, LastLevelCacheBytes()) ? 1 : 0;
}

}  // namespace
}  // namespace pacer::bench

int main(int argc, char** argv) {
  // OpenMP's idle threads spin after each reference loop and would steal the cores the Reducer's
  // pool runs on next; the runtime reads its wait policy when the program loads, so set it and
  // start again.
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv);
  }
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  try {
    return pacer::bench::Main();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pacer-reduce-bench: %s\n", e.what());
    return 2;
  }
}
