// Push/pull throughput and latency, measured like nccl-tests measure collectives.
//
//   mpirun -np 3 build/bin/pacer-kv-bench --servers 1 --sizes=4096,1048576 --window=1,8
//
// For every (size, op, window) point each worker keeps `window` operations in flight on keys of
// its own, one key on every server, `size` bytes per server per operation; about
// --bytes_per_point bytes move per point (at least --min_ops operations). GB/s is 1e9 bytes per
// second summed over the workers, over the slowest worker's time. Pulled values are checked
// exactly; a mismatch ends the run with exit status 1.
#include <gflags/gflags.h>
#include <mpi.h>
#include <pacer/kv_server.h>
#include <pacer/kv_worker.h>
#include <pacer/session.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "allreduce_compare.h"
#include "app_roles.h"
#include "bench_keys.h"
#include "list_flag.h"
#include "percentile.h"

DEFINE_string(sizes, "4096,65536,1048576,16777216", "bytes per server per operation");
DEFINE_string(window, "1,8", "operations in flight per worker");
DEFINE_string(ops, "push,pull,pushpull", "operations to measure");
DEFINE_string(json, "", "also write the points to this file as a JSON array");
DEFINE_int64(bytes_per_point, int64_t{256} << 20, "bytes each worker moves per point");
DEFINE_int32(min_ops, 10, "fewest operations per point");
DEFINE_int32(warmup_ops, 3, "unmeasured operations before each point");
DEFINE_bool(push_memory, true,
            "push from Session::AllocatePushMemory (servers on this host read it in place); "
            "false: from ordinary memory, which a push to such a server copies");
DEFINE_bool(pull_into_one, true,
            "a point's pulls land in one buffer, as tag_bw's receiver receives every message into "
            "one (pulls of the same values: pull-only points); false: one buffer per slot");
DEFINE_bool(allreduce_compare, false,
            "also time MPI_Allreduce of --allreduce_bytes per worker against Pacer's push + pull");
DEFINE_int64(allreduce_bytes, int64_t{100} << 20, "gradient bytes per worker to compare");
DEFINE_int64(allreduce_chunk, int64_t{4} << 20, "bytes per key when Pacer sums the gradients");

namespace pacer {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

enum class Op { kPush, kPull, kPushPull };

struct Point {
  Op op;
  std::string op_name;
  size_t size;
  int window;
  double us_per_op;
  double p50_us;  // window 1 only: the median and 99th percentile of one operation's time
  double p99_us;
  double gbps;
};

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "pacer-kv-bench: %s\n", why.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

// Checks that every value of `keys` equals `expected` (pulled through a separate request).
void Check(KVWorker<float>& kv, const std::vector<Key>& keys, size_t values, float expected,
           const char* what) {
  std::vector<float> out(values, -1.0f);
  kv.Wait(kv.ZPull(keys, Span<float>(out.data(), out.size())));
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != expected) {
      std::ostringstream s;
      s << what << ": value " << i << " of keys starting " << keys[0] << " is " << out[i]
        << ", expected " << expected;
      Fail(s.str());
    }
  }
}

class Runner {
 public:
  Runner(Session& session, MPI_Comm workers) : session_(session), kv_(session), workers_(workers) {}

  Point Run(int index, Op op, const std::string& name, size_t size, int window) {
    const int servers = session_.num_servers();
    const size_t values = size / sizeof(float) * servers;
    BenchKeys keys(session_, index, window);
    const int me = session_.role_index();
    // Pushes read one source, as ucx_perftest's tag_bw sends one buffer `window` times.
    std::shared_ptr<void> source =
        FLAGS_push_memory ? session_.AllocatePushMemory(values * sizeof(float))
                          : std::shared_ptr<void>(new float[values],
                                                  [](void* p) { delete[] static_cast<float*>(p); });
    const Span<const float> ones(static_cast<float*>(source.get()), values);
    std::fill_n(static_cast<float*>(source.get()), values, 1.0f);
    // Pull-only points pull values that do not change, and tag_bw, the reference, receives into
    // one buffer: where the window's pulls land in one buffer too, the figure compares the
    // transports. Landing in `window` buffers moves a 1 MiB point's working set from the core's
    // cache to the shared one (--pull_into_one=false shows what that costs).
    const bool one_out = op == Op::kPull && FLAGS_pull_into_one;
    std::vector<std::vector<float>> outs(one_out ? 1 : window, std::vector<float>(values));
    auto out_of = [&](int slot) -> std::vector<float>& { return outs[one_out ? 0 : slot]; };
    std::vector<int> pushes(window, 0);
    std::vector<int> pending(window, -1);

    auto issue = [&](int slot) {
      const std::vector<Key>& k = keys.of(me, slot);
      Span<float> out(out_of(slot).data(), values);
      switch (op) {
        case Op::kPush:
          ++pushes[slot];
          return kv_.ZPush(k, ones);
        case Op::kPull:
          return kv_.ZPull(k, out);
        case Op::kPushPull:
          ++pushes[slot];
          return kv_.ZPushPull(k, ones, out);
      }
      return -1;
    };
    // Every key starts with one push, so pulls have something to return.
    for (int slot = 0; slot < window; ++slot) {
      ++pushes[slot];
      kv_.Wait(kv_.ZPush(keys.of(me, slot), ones));
    }
    const int64_t ops = std::max<int64_t>(
        FLAGS_min_ops, FLAGS_bytes_per_point / static_cast<int64_t>(size * servers));
    std::vector<double> latencies;
    // Keeps `window` operations in flight for `count` operations; records each one's time at
    // window 1.
    auto run = [&](int64_t count, bool record) {
      auto last = Clock::now();
      for (int64_t i = 0; i < count; ++i) {
        int slot = static_cast<int>(i % window);
        if (pending[slot] >= 0) kv_.Wait(pending[slot]);
        if (record && window == 1) {
          auto now = Clock::now();
          if (i > 0)
            latencies.push_back(std::chrono::duration<double, std::micro>(now - last).count());
          last = now;
        }
        pending[slot] = issue(slot);
      }
      for (int& p : pending) {
        if (p >= 0) kv_.Wait(p);
        p = -1;
      }
      if (record && window == 1) {
        latencies.push_back(std::chrono::duration<double, std::micro>(Clock::now() - last).count());
      }
    };
    // The warm-up runs as the measurement does, window and all, so that every buffer the
    // pipeline needs (on both sides) exists before the clock starts.
    run(int64_t{FLAGS_warmup_ops} * window, false);

    latencies.reserve(ops);
    MPI_Barrier(workers_);
    const auto start = Clock::now();
    run(ops, true);
    const auto end = Clock::now();
    double elapsed = std::chrono::duration<double>(end - start).count(), slowest = 0;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, workers_);

    for (int slot = 0; slot < window; ++slot) {
      Check(kv_, keys.of(me, slot), values, float(pushes[slot]), name.c_str());
      if (op == Op::kPull || op == Op::kPushPull) {
        // The last pull of the slot saw every push made before it.
        float expected = float(pushes[slot]);
        for (float v : out_of(slot)) {
          if (v != expected) Fail(name + ": a pulled value differs from the number of pushes");
        }
      }
    }
    double total_bytes = double(ops) * size * servers * session_.num_workers();
    return {op,
            name,
            size,
            window,
            slowest / ops * 1e6,
            Percentile(latencies, 0.5),
            Percentile(latencies, 0.99),
            total_bytes / slowest / 1e9};
  }

  // Every worker pushes to the same keys: the pull must return the sum over workers.
  void CheckSumOverWorkers(int index) {
    BenchKeys keys(session_, index, 1);
    std::vector<float> ones(keys.shared().size() * 256, 1.0f);
    kv_.Wait(kv_.ZPush(keys.shared(), ones));
    session_.Barrier(kWorkerGroup);
    Check(kv_, keys.shared(), ones.size(), float(session_.num_workers()), "sum over workers");
  }

  KVWorker<float>& kv() { return kv_; }

 private:
  Session& session_;
  KVWorker<float> kv_;
  MPI_Comm workers_;
};

void WriteJson(const std::string& path, const std::vector<Point>& points, const Session& s) {
  std::ofstream out(path);
  out << "[\n";
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    out << "  {\"op\": \"" << p.op_name << "\", \"size\": " << p.size
        << ", \"window\": " << p.window << ", \"servers\": " << s.num_servers()
        << ", \"workers\": " << s.num_workers() << ", \"transport\": \"" << s.transport_name()
        << "\", \"us_per_op\": " << p.us_per_op << ", \"p50_us\": " << p.p50_us
        << ", \"p99_us\": " << p.p99_us << ", \"gbps\": " << p.gbps << "}"
        << (i + 1 < points.size() ? ",\n" : "\n");
  }
  out << "]\n";
}

int RunWorker(Session& session, MPI_Comm workers) {
  const bool printer = session.role_index() == 0;
  Runner runner(session, workers);
  std::vector<Point> points;
  if (printer) {
    std::printf("# pacer-kv-bench: %d servers, %d workers, transport %s\n", session.num_servers(),
                session.num_workers(), session.transport_name().c_str());
    std::printf("#%11s %9s %7s %11s %11s %11s %9s\n", "size", "op", "window", "us/op", "p50 us",
                "p99 us", "GB/s");
  }
  int index = 0;
  for (const std::string& size_text : SplitList(FLAGS_sizes)) {
    size_t size = std::stoull(size_text);
    if (size == 0 || size % sizeof(float) != 0)
      Fail("size " + size_text + " is not a multiple of 4");
    for (const std::string& name : SplitList(FLAGS_ops)) {
      Op op = name == "push" ? Op::kPush : name == "pull" ? Op::kPull : Op::kPushPull;
      if (name != "push" && name != "pull" && name != "pushpull") Fail("unknown op " + name);
      for (const std::string& w : SplitList(FLAGS_window)) {
        Point p = runner.Run(index++, op, name, size, std::stoi(w));
        points.push_back(p);
        if (printer) {
          std::printf("%12zu %9s %7d %11.2f %11.2f %11.2f %9.3f\n", p.size, p.op_name.c_str(),
                      p.window, p.us_per_op, p.p50_us, p.p99_us, p.gbps);
          std::fflush(stdout);
        }
      }
    }
  }
  runner.CheckSumOverWorkers(index++);
  if (printer) std::printf("# every pulled value checked: exact\n");
  if (FLAGS_allreduce_compare) {
    AllreduceFigures f = CompareWithAllreduce(session, runner.kv(), workers, FLAGS_allreduce_bytes,
                                              FLAGS_allreduce_chunk, 5);
    if (printer) {
      std::printf(
          "# allreduce-compare: %.1f MB per worker over %d workers: MPI_Allreduce %.1f ms,"
          " Pacer push+pull %.1f ms, ratio %.2f\n",
          FLAGS_allreduce_bytes / 1e6, session.num_workers(), f.allreduce_ms, f.pacer_ms,
          f.pacer_ms / f.allreduce_ms);
    }
  }
  if (printer && !FLAGS_json.empty()) WriteJson(FLAGS_json, points, session);
  return 0;
}

// gflags names use underscores; accept --allreduce-compare as well as --allreduce_compare.
void NormalizeFlagNames(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--", 2) != 0) continue;
    for (char* c = argv[i] + 2; *c != '\0' && *c != '='; ++c) {
      if (*c == '-') *c = '_';
    }
  }
}

}  // namespace
}  // namespace bench
}  // namespace pacer

namespace {

int Run(int argc, char** argv) {
  pacer::bench::NormalizeFlagNames(argc, argv);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  pacer::Config config = pacer::Config::ParseCommandLine(&argc, &argv);
  int status = 0;
  {
    pacer::Session session(config);
    MPI_Comm workers;
    MPI_Comm_split(MPI_COMM_WORLD, session.is_worker() ? 0 : MPI_UNDEFINED, session.rank(),
                   &workers);
    if (session.is_server()) {
      pacer::KVServer<float> server(session);
      session.Finalize();
    } else if (session.is_worker()) {
      status = pacer::bench::RunWorker(session, workers);
      MPI_Comm_free(&workers);
      session.Finalize();
    } else {
      session.Finalize();
    }
  }
  MPI_Finalize();
  return status;
}

}  // namespace

// A bad job (too few ranks for --servers, say) is one line naming what is wrong, not an abort.
int main(int argc, char** argv) {
  return pacer::bench::GuardedMain("pacer-kv-bench", Run, argc, argv);
}
