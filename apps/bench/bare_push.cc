// pacer-bare-push: a push's data movement with no library in between, for comparison.
//
//   mpirun -np 2 build/bin/pacer-bare-push --sizes=1048576,16777216 --window=8
//
// A push must bring the worker's bytes into the server's memory and add them into the key's
// stored values. Here rank 1 (the worker) writes each operation into a receive buffer of rank 0
// (the server) with one cross-process copy, process_vm_writev, the copy UCX's shared-memory
// rendezvous makes; rank 0 adds it into that key's values with Pacer's CPU sum on one thread.
// `window` operations are in flight, each on a key of its own, as in pacer-kv-bench. The two
// sides meet through counters in MPI shared memory, polled: no messages, no protocol, no
// wake-ups. What is left is the data itself, copied on one core and summed on the other: the copy
// writes lines the server's core read last time, and the sum reads lines the worker's core just
// wrote.
//
// Raw ucx_perftest tag_bw never pays that: its receive buffer is never read, so its lines stay in
// the copying core's cache. make bench-kv prints this figure next to tag_bw and Pacer's push. It
// is not a strict ceiling: threads that happen to share caches differently can beat it.
#include <gflags/gflags.h>
#include <mpi.h>
#include <pacer/reducer.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "list_flag.h"

DEFINE_string(sizes, "1048576,16777216", "bytes per operation");
DEFINE_int32(window, 8, "operations in flight");
DEFINE_int64(bytes_per_point, int64_t{1} << 30, "bytes moved per point");
DEFINE_int32(min_ops, 10, "fewest operations per point");
DEFINE_int32(warmup_ops, 3, "unmeasured operations per slot before each point");

namespace pacer::bench {
namespace {

constexpr int kServer = 0, kWorker = 1;

// Counters both ranks see: operations written by the worker, operations summed by the server.
struct Progress {
  alignas(64) int64_t written;  // a line each: the two ranks write them
  alignas(64) int64_t summed;
};

int64_t Load(const int64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void Store(int64_t* p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

class Pair {
 public:
  explicit Pair(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Aint bytes = rank_ == kServer ? sizeof(Progress) : 0;
    void* base = nullptr;
    MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, comm_, &base, &window_);
    MPI_Aint size = 0;
    int unit = 0;
    MPI_Win_shared_query(window_, kServer, &size, &unit, &base);
    progress_ = static_cast<Progress*>(base);
    if (rank_ == kServer) *progress_ = {0, 0};
    int64_t pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT64_T, kServer, comm_);
    server_pid_ = static_cast<pid_t>(pid);
  }
  ~Pair() { MPI_Win_free(&window_); }

  // The bytes per second of `ops` pushes of `size` bytes, `window` in flight.
  double Measure(size_t size, int window, int64_t ops) {
    const size_t count = size / sizeof(float);
    const int buffers = 2 * window;  // a slot's next write never lands in a buffer being summed
    auto reducer = MakeCpuReducer(1);
    std::vector<float*> received, stored;
    uint64_t base = 0;
    float* source = nullptr;
    if (rank_ == kServer) {
      auto* block = static_cast<float*>(reducer->Allocate(size * buffers));
      std::memset(block, 0, size * buffers);
      for (int b = 0; b < buffers; ++b) received.push_back(block + b * count);
      for (int k = 0; k < window; ++k) {
        stored.push_back(static_cast<float*>(reducer->Allocate(size)));
        std::memset(stored.back(), 0, size);
      }
      base = reinterpret_cast<uint64_t>(block);
    } else {
      source = static_cast<float*>(reducer->Allocate(size));
      std::fill(source, source + count, 1.0f);
    }
    MPI_Bcast(&base, 1, MPI_UINT64_T, kServer, comm_);

    auto run = [&](int64_t first, int64_t n) {
      for (int64_t op = first; op < first + n; ++op) {
        if (rank_ == kWorker) {
          while (op - Load(&progress_->summed) >= window) {
          }
          iovec local{source, size};
          iovec remote{reinterpret_cast<void*>(base + (op % buffers) * size), size};
          if (process_vm_writev(server_pid_, &local, 1, &remote, 1, 0) !=
              static_cast<ssize_t>(size)) {
            // The server polls for this write: only ending the job can stop it.
            std::fprintf(stderr, "pacer-bare-push: process_vm_writev into rank 0: %s\n",
                         std::strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
          Store(&progress_->written, op + 1);
        } else {
          while (Load(&progress_->written) <= op) {
          }
          float* key = stored[op % window];
          const ConstArray in[] = {{key, DType::kF32}, {received[op % buffers], DType::kF32}};
          reducer->Sum({in, 2}, {key, DType::kF32}, count);
          Store(&progress_->summed, op + 1);
        }
      }
      while (Load(&progress_->summed) < first + n) {
      }
    };
    const int64_t warmup = int64_t{FLAGS_warmup_ops} * window;
    run(0, warmup);
    MPI_Barrier(comm_);
    const auto start = std::chrono::steady_clock::now();
    run(warmup, ops);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double slowest = 0;
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm_);
    MPI_Barrier(comm_);  // the worker writes nothing more into buffers freed below
    // Every operation added ones into key op % window: fast and wrong is not a result.
    const int64_t total = warmup + ops;
    for (int k = 0; k < static_cast<int>(stored.size()) && error_.empty(); ++k) {
      const float expected = float(total / window + (k < total % window ? 1 : 0));
      for (size_t i = 0; i < count; ++i) {
        if (stored[k][i] != expected) {
          error_ = "size " + std::to_string(size) + ": key " + std::to_string(k) + " holds " +
                   std::to_string(stored[k][i]) + " at element " + std::to_string(i) +
                   " after its pushes, not " + std::to_string(expected);
          break;
        }
      }
    }
    for (float* p : stored) reducer->Free(p);
    if (!received.empty()) reducer->Free(received.front());
    if (source != nullptr) reducer->Free(source);
    Store(&progress_->written, 0);
    Store(&progress_->summed, 0);
    MPI_Barrier(comm_);
    return double(ops) * size / slowest;
  }

  int rank() const { return rank_; }
  // What the server found wrong in the sums, or empty.
  const std::string& error() const { return error_; }

 private:
  MPI_Comm comm_;
  MPI_Win window_;
  int rank_ = 0;
  Progress* progress_ = nullptr;
  pid_t server_pid_ = 0;
  std::string error_;
};

int Run() {
  const std::vector<size_t> sizes = ParseSizes(FLAGS_sizes);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int local_size = 0, world = 0;
  MPI_Comm_size(local, &local_size);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world != 2 || local_size != 2) {
    std::fprintf(stderr, "pacer-bare-push: needs exactly 2 ranks on one host (got %d, %d here)\n",
                 world, local_size);
    MPI_Comm_free(&local);
    return 2;
  }
  int status = 0;
  {
    Pair pair(local);
    if (pair.rank() == kServer) {
      std::printf("# pacer-bare-push: a worker process copies, a server process sums; window %d\n",
                  FLAGS_window);
      std::printf("# %10s %8s %10s\n", "size(B)", "window", "GB/s");
    }
    for (size_t size : sizes) {
      if (size % sizeof(float) != 0 || size == 0) {
        if (pair.rank() == kServer) std::fprintf(stderr, "size %zu: not whole floats\n", size);
        status = 2;
        break;
      }
      const int64_t ops = std::max<int64_t>(FLAGS_min_ops, FLAGS_bytes_per_point / int64_t(size));
      const double rate = pair.Measure(size, FLAGS_window, ops);
      if (!pair.error().empty()) {
        std::fprintf(stderr, "pacer-bare-push: %s\n", pair.error().c_str());
        status = 1;
      }
      if (pair.rank() == kServer) {
        std::printf("  %10zu %8d %10.3f\n", size, FLAGS_window, rate / 1e9);
        std::fflush(stdout);
      }
    }
  }
  MPI_Comm_free(&local);
  return status;
}

}  // namespace
}  // namespace pacer::bench

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = pacer::bench::Run();
  } catch (const std::invalid_argument& e) {  // --sizes, before any communicator exists
    std::fprintf(stderr, "pacer-bare-push: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
