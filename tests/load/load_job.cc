// A load job: every worker keeps --tensors PushPulls in flight at once (with
// --scheduling_credit at least as large, all of them on the wire), of sizes drawn log-uniformly
// from one float to --max_tensor_bytes, while the scheduler moves key ranges between servers and
// switches the job from bsp to consgd. The gradients are small integers and the weights sum to a
// power of two, so every update is exact in float under either rule: each worker checks that every
// value it fetches at the end is exactly what applying every gradient once gives. Every rank then
// prints one line (its role, whether its values were exact, its peak RSS), for
// tests/e2e/check_load.py (ctest) and `make soak`.
//
//   mpirun -np 32 build/bin/pacer-load-job --servers 4 --scheduling_credit=400
#include <gflags/gflags.h>
#include <pacer/gradient_sync.h>
#include <pacer/migration_control.h>
#include <pacer/parameter_server.h>
#include <pacer/session.h>
#include <pacer/sync_control.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

DEFINE_int32(tensors, 371, "tensors per worker, all pushed and pulled at once each iteration");
DEFINE_int32(iterations, 6, "iterations of every worker");
DEFINE_int64(max_tensor_bytes, 1 << 20, "the largest tensor (the smallest is one float)");
DEFINE_int32(migrations, 6, "key ranges the scheduler moves during the run");
DEFINE_double(migrate_gap_s, 0.5, "between two moves");
DEFINE_double(switch_after_s, 1.0, "when the scheduler switches from bsp to consgd");

namespace {

// Worker 0 weighs 32 - (workers - 1), the others 1: the weights sum to 32, so bsp's mean and
// consgd:1/32 both scale each push by an exact 1/32.
constexpr double kTotalWeight = 32;
const char* const kSwitchTo = "consgd:0.03125";

double WeightOf(int worker, int workers) { return worker == 0 ? kTotalWeight - (workers - 1) : 1; }
// Every value of worker w's gradient, every iteration.
float GradientOf(int worker) { return static_cast<float>(worker + 1); }

long PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

std::vector<size_t> TensorSizes() {
  std::mt19937_64 rng(11);  // the same on every worker: they register the same tensors
  std::uniform_real_distribution<double> exponent(0, std::log(FLAGS_max_tensor_bytes / 4.0));
  std::vector<size_t> sizes(FLAGS_tensors);
  for (size_t& n : sizes) n = static_cast<size_t>(std::exp(exponent(rng)));
  return sizes;
}

bool Work(pacer::Session& session) {
  const int me = session.role_index(), workers = session.num_workers();
  if (workers > kTotalWeight) throw std::invalid_argument("at most 32 workers");
  const std::vector<size_t> sizes = TensorSizes();
  std::vector<std::vector<float>> params, grads;
  pacer::GradientSync sync(session);
  for (size_t t = 0; t < sizes.size(); ++t) {
    params.emplace_back(sizes[t], 0.f);
    grads.emplace_back(sizes[t], GradientOf(me));
    sync.Register("t" + std::to_string(t), params[t].data(), sizes[t]);
  }
  sync.set_weight(WeightOf(me, workers));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < FLAGS_iterations; ++i) {
    sync.BeginIteration(1);
    for (size_t t = 0; t < sizes.size(); ++t) {
      sync.PushPull("t" + std::to_string(t), grads[t].data(), params[t].data());
    }
    sync.EndIteration();
    if (i == 0) session.Barrier(pacer::kAllNodes);  // training: the scheduler's moves may start
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  session.Barrier(pacer::kWorkerGroup);  // consgd applies on arrival: every push in first
  sync.Fetch();
  // sgd:lr=1 from 0: minus every weighted gradient over 32, each applied once.
  double per_iteration = 0;
  for (int w = 0; w < workers; ++w) per_iteration += WeightOf(w, workers) * GradientOf(w);
  const float expected = static_cast<float>(-FLAGS_iterations * per_iteration / kTotalWeight);
  size_t wrong = 0, first_wrong_tensor = 0;
  float first_wrong_value = 0;
  for (size_t t = 0; t < sizes.size(); ++t) {
    for (float v : params[t]) {
      if (v != expected && wrong++ == 0) {
        first_wrong_tensor = t;
        first_wrong_value = v;
      }
    }
  }
  if (me == 0) {
    size_t bytes = 0;
    for (size_t n : sizes) bytes += n * sizeof(float);
    std::printf("load: %d workers x %d tensors (%.1f MB) x %d iterations in %.1f s\n", workers,
                FLAGS_tensors, bytes / 1e6, FLAGS_iterations, seconds);
  }
  if (wrong > 0) {
    std::fprintf(stderr, "worker %d: %zu values differ from %.6f, the first in tensor t%zu: %.6f\n",
                 me, wrong, expected, first_wrong_tensor, first_wrong_value);
  }
  return wrong == 0;
}

void Schedule(pacer::Session& session) {
  pacer::SyncControl modes(session);
  pacer::MigrationControl placement(session);
  session.Barrier(pacer::kAllNodes);  // the workers are past their first iteration
  std::mt19937 rng(5);
  const auto start = std::chrono::steady_clock::now();
  bool switched = false;
  for (int i = 0; i < FLAGS_migrations || !switched; ++i) {
    std::this_thread::sleep_for(std::chrono::duration<double>(FLAGS_migrate_gap_s));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!switched && elapsed >= FLAGS_switch_after_s) {
      const int64_t clock = modes.Switch(pacer::SyncMode::Parse(kSwitchTo));
      std::printf("load: switched to %s from clock %lld\n", kSwitchTo,
                  static_cast<long long>(clock));
      switched = true;
    }
    if (i >= FLAGS_migrations || placement.num_servers() < 2) continue;
    // From the server holding the most ranges to the one holding the fewest, so that no server's
    // share (and so its memory bound) drifts over a long soak.
    std::vector<std::vector<int>> held(placement.num_servers());
    for (int r = 0; r < placement.num_ranges(); ++r) held[placement.OwnerOf(r)].push_back(r);
    auto by_count = [](const auto& a, const auto& b) { return a.size() < b.size(); };
    const int from =
        static_cast<int>(std::max_element(held.begin(), held.end(), by_count) - held.begin());
    int to = static_cast<int>(std::min_element(held.begin(), held.end(), by_count) - held.begin());
    if (held[to].size() == held[from].size()) {
      to = (from + 1 + static_cast<int>(rng() % (placement.num_servers() - 1))) %
           placement.num_servers();
    }
    const int range = held[from][rng() % held[from].size()];
    const pacer::MigrationControl::Move move = placement.MoveRange(range, to);
    std::printf("load: moved range %d from server %d to %d (%lld bytes, paused %.3f s)\n", range,
                from, to, static_cast<long long>(move.bytes), move.pause_s);
  }
}

int Run(int argc, char** argv) {
  if (std::getenv("PACER_OPTIMIZER") == nullptr) {
    gflags::SetCommandLineOptionWithMode("optimizer", "sgd:lr=1", gflags::SET_FLAGS_DEFAULT);
  }
  pacer::Session session(pacer::Config::ParseCommandLine(&argc, &argv));
  bool exact = true;
  std::string role = "scheduler";
  if (session.is_server()) {
    role = "server";
    pacer::ParameterServer server(session);
    session.Barrier(pacer::kAllNodes);  // training
    session.Finalize();                 // serves until every rank is done, however long it trains
  } else if (session.is_worker()) {
    role = "worker";
    exact = Work(session);
    session.Finalize();
  } else {
    Schedule(session);
    session.Finalize();
  }
  const int rank = session.rank(), index = session.role_index();
  std::printf("load: rank %d %s %d exact %d peak_rss_mb %ld\n", rank, role.c_str(), index,
              exact ? 1 : 0, PeakRssMb());
  return exact ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pacer-load-job: %s\n", e.what());
    return 2;
  }
}
