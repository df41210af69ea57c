// A job that survives a lost worker (issue 30): 1 scheduler, 1 server and 4 workers train three
// tensors with --sync as given, sgd:lr=1 from 0, worker w's gradient w + 1 in every value, for
// --iterations of --compute_ms each. tests/e2e/check_lost_worker.py freezes worker 2 midway; the
// job goes on without it, and each live worker prints the values it fetched at the end, from
// which the test checks that every update was the rule's over the workers that pushed:
//
//   lost-worker-job: worker W values V
//
//   mpirun -np 6 build/bin/pacer-lost-worker-job --servers 1 --sync=asp
#include <gflags/gflags.h>
#include <pacer/gradient_sync.h>
#include <pacer/parameter_server.h>
#include <pacer/session.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

DEFINE_int32(iterations, 200, "iterations of every worker");
DEFINE_int32(compute_ms, 20, "each iteration's compute");

namespace {

const size_t kSizes[] = {1, 1000, 100000};

// Whether every value of every tensor equals the first one; prints it.
bool Work(pacer::Session& session) {
  const int me = session.role_index();
  std::vector<std::vector<float>> params, grads;
  pacer::GradientSync sync(session);
  for (size_t t = 0; t < std::size(kSizes); ++t) {
    params.emplace_back(kSizes[t], 0.f);
    grads.emplace_back(kSizes[t], static_cast<float>(me + 1));
    sync.Register("t" + std::to_string(t), params[t].data(), kSizes[t]);
  }
  for (int i = 0; i < FLAGS_iterations; ++i) {
    sync.BeginIteration(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(FLAGS_compute_ms));
    for (size_t t = 0; t < params.size(); ++t) {
      sync.PushPull("t" + std::to_string(t), grads[t].data(), params[t].data());
    }
    sync.EndIteration();
  }
  session.Barrier(pacer::kWorkerGroup);  // the live ones: every push of theirs is in
  sync.Fetch();
  const float first = params[0][0];
  bool uniform = true;
  for (const auto& tensor : params) {
    for (float v : tensor) uniform = uniform && v == first;
  }
  std::printf("lost-worker-job: worker %d values %.6f%s\n", me, first,
              uniform ? "" : " (not uniform)");
  return uniform;
}

int Run(int argc, char** argv) {
  gflags::SetCommandLineOptionWithMode("optimizer", "sgd:lr=1", gflags::SET_FLAGS_DEFAULT);
  pacer::Session session(pacer::Config::ParseCommandLine(&argc, &argv));
  bool ok = true;
  if (session.is_server()) {
    pacer::ParameterServer server(session);
    session.Finalize();
  } else if (session.is_worker()) {
    ok = Work(session);
    std::fflush(stdout);
    session.Finalize();
  } else {
    session.Finalize();
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pacer-lost-worker-job: %s\n", e.what());
    return 2;
  }
}
