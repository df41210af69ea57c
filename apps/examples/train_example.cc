// Trains softmax regression through GradientSync, the training loop of the README.
//
//   mpirun -np 6 build/bin/pacer-train-example --servers 2 --sync=ssp:2
//
// Every worker owns a share of a clustered data set; each iteration it computes the gradient of
// its minibatch and pushes it, and the servers update the model by the job's --sync rule. With
// --switch_to=MODE the scheduler switches the rule after --switch_after_s seconds. Worker 0
// prints the loss every 10 iterations and the final accuracy; the job fails below
// --min_accuracy. --compute_ms emulates a larger model's compute time, --inject slows nodes down
// and --metrics logs every iteration and detection (see the README). With --tasks=N each
// minibatch is N micro-batches (GradientSync::NextTask): under --sync=epsp:S the scheduler hands
// them out, so the others take a slow worker's (Falcon).
#include <gflags/gflags.h>
#include <pacer/gradient_sync.h>
#include <pacer/parameter_server.h>
#include <pacer/session.h>
#include <pacer/sync_control.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "softmax_regression.h"
#include "task_gradients.h"

DEFINE_int32(iterations, 100, "training iterations");
DEFINE_int32(batch, 32, "samples per worker and iteration");
DEFINE_double(min_accuracy, 0.75,
              "the job fails if the final accuracy is lower (the data allow about 0.8)");
DEFINE_string(switch_to, "", "a mode the scheduler switches to during training");
DEFINE_double(switch_after_s, 0.2, "when the scheduler switches");
DEFINE_double(compute_ms, 0, "emulated compute time per iteration, slept before the gradient");
DEFINE_int32(tasks, 0, "micro-batches per worker and iteration (0: one minibatch, no tasks)");

namespace {

void EmulateCompute(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

// The worker's minibatch gradient; returns its loss.
double MinibatchGradient(const pacer::examples::Dataset& data,
                         const pacer::examples::SoftmaxRegression& model, pacer::Session& session,
                         int64_t clock, const std::vector<float>& w, const std::vector<float>& b,
                         std::vector<float>& w_grad, std::vector<float>& b_grad) {
  EmulateCompute(FLAGS_compute_ms);
  auto rows = pacer::examples::MinibatchRows(data.size(), session.num_workers(),
                                             session.role_index(), clock, FLAGS_batch);
  return model.Loss(data, rows, w.data(), b.data(), w_grad.data(), b_grad.data());
}

int Train(pacer::Session& session) {
  const pacer::examples::Dataset data = pacer::examples::MakeClusters(4096, 16, 4, /*seed=*/7);
  pacer::examples::SoftmaxRegression model(data.features, data.classes);
  std::vector<float> w(model.weights_size()), b(model.biases_size());
  std::vector<float> w_grad(w.size()), b_grad(b.size());
  std::mt19937 rng(session.rank());  // different on every worker: worker 0's values win
  std::normal_distribution<float> normal(0.f, 0.1f);
  for (float& v : w) v = normal(rng);

  pacer::GradientSync sync(session);
  sync.Register("weights", w.data(), w.size());
  sync.Register("biases", b.data(), b.size());
  if (FLAGS_tasks > 0) sync.UseTasks(FLAGS_tasks);
  int64_t moved = 0;
  for (int i = 0; i < FLAGS_iterations; ++i) {
    sync.BeginIteration(FLAGS_batch);
    double loss = 0;
    if (FLAGS_tasks > 0) {
      pacer::examples::TaskGradients(
          sync, data, model, session.num_workers(), FLAGS_tasks, FLAGS_batch, w, b, w_grad, b_grad,
          [](const pacer::Task&) { EmulateCompute(FLAGS_compute_ms / FLAGS_tasks); }, &loss);
    } else {
      loss = MinibatchGradient(data, model, session, sync.clock(), w, b, w_grad, b_grad);
    }
    sync.PushPull("weights", w_grad.data(), w.data());
    sync.PushPull("biases", b_grad.data(), b.data());
    sync.EndIteration();
    moved += sync.last_iteration().tasks_transferred;
    if (session.role_index() == 0 && i % 10 == 0) {
      std::printf("iteration %3d  clock %3lld  loss %.4f  compute %.2f ms  wait %.2f ms\n", i,
                  static_cast<long long>(sync.last_iteration().clock), loss,
                  sync.last_iteration().compute_s * 1e3, sync.last_iteration().wait_s * 1e3);
    }
  }
  const double accuracy = model.Accuracy(data, w.data(), b.data());
  std::printf("worker %d: accuracy %.4f after %d iterations (%s), %lld tasks of others computed\n",
              session.role_index(), accuracy, FLAGS_iterations, session.config().sync.c_str(),
              static_cast<long long>(moved));
  return accuracy >= FLAGS_min_accuracy ? 0 : 1;
}

int Run(int argc, char** argv) {
  // This model wants a larger step than the library's default.
  if (std::getenv("PACER_OPTIMIZER") == nullptr) {
    gflags::SetCommandLineOptionWithMode("optimizer", "sgd:lr=0.5", gflags::SET_FLAGS_DEFAULT);
  }
  pacer::Session session(pacer::Config::ParseCommandLine(&argc, &argv));
  int status = 0;
  if (session.is_server()) {
    pacer::ParameterServer server(session);
    session.Finalize();
  } else if (session.is_worker()) {
    status = Train(session);
    session.Finalize();
  } else {
    if (!FLAGS_switch_to.empty()) {
      pacer::SyncControl control(session);
      std::this_thread::sleep_for(std::chrono::duration<double>(FLAGS_switch_after_s));
      int64_t clock = control.Switch(pacer::SyncMode::Parse(FLAGS_switch_to));
      std::printf("scheduler: switched to %s from clock %lld\n", FLAGS_switch_to.c_str(),
                  static_cast<long long>(clock));
    }
    session.Finalize();
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pacer-train-example: %s\n", e.what());
    return 2;
  }
}
