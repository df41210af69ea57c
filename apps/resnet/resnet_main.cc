// pacer-resnet: a ResNet trained on Fashion-MNIST through GradientSync (issue 9).
//
//   mpirun -np 6 build/bin/pacer-resnet --servers 1 --epochs=3
//   mpirun -np 6 build/bin/pacer-resnet --servers 1 --scenario=S1 --policy=epsp:0 --tasks=4
//
// Each worker trains on every workers-th image (--batch per iteration), the servers apply the
// job's --optimizer (default SGD with momentum) by its --sync rule; --policy and --scenario take
// the scenario harness's names (--inject, --metrics and the other session flags work as anywhere).
// --tasks=N splits each minibatch into N micro-batches that GradientSync hands out (under epsp:S
// the others take a slow worker's). Worker 0 measures test accuracy every epoch (or --eval-every
// iterations), shows progress, and prints a summary (--json writes it).
#include <gflags/gflags.h>
#include <mpi.h>
#include <pacer/gradient_sync.h>
#include <pacer/session.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app_roles.h"
#include "fashion_mnist.h"
#include "flag_names.h"
#include "percentile.h"
#include "resnet_model.h"
#include "scenario_presets.h"
#include "training_report.h"
#include "worker_gather.h"

DEFINE_string(arch, "small", "small (3 stages of basic blocks) or resnet50");
DEFINE_int32(depth, 8, "small: layers, 6n + 2 (8: one block per stage, 20: ResNet-20)");
DEFINE_int32(width, 16, "small: channels of the first stage (then 2x, 4x)");
DEFINE_int32(batch, 32, "images per worker and iteration");
DEFINE_int32(tasks, 0, "micro-batches per worker and iteration (0: no tasks); divides --batch");
DEFINE_double(epochs, 4, "passes over the training set");
DEFINE_int64(max_iters, 0, "stop after this many iterations (0: --epochs decides)");
DEFINE_int64(eval_every, 0, "iterations between worker 0's test-accuracy checks (0: each epoch)");
DEFINE_double(target_acc, 0.9, "test accuracy whose first time is reported");
DEFINE_double(min_acc, 0, "the job fails (exit 1) if worker 0's final test accuracy is lower");
DEFINE_string(policy, "", "a straggler policy of the scenario harness (bsp, epsp:0, sas, ...)");
DEFINE_string(scenario, "", "a reference straggler scenario, S1..S6 (STRAGGLERS.md section 9)");
DEFINE_int32(threads, 1, "torch threads per worker");
DEFINE_string(json, "", "write the summary here");
DEFINE_bool(synthetic, false,
            "no model math: --arch's tensors (resnet50: 25.6M parameters) with zero gradients and "
            "--compute-ms of emulated compute per iteration, for communication benchmarks");
DEFINE_double(compute_ms, 100, "--synthetic: emulated compute per iteration");
DEFINE_string(progress, "auto", "worker 0's progress: bar, lines, or auto (a bar on a terminal)");
DEFINE_string(data, pacer::examples::kFashionMnistDir, "Fashion-MNIST directory");

namespace {

using pacer::examples::Dataset;

struct Batch {
  std::vector<float> images;
  std::vector<int> labels;
};

Batch Gather(const Dataset& data, const std::vector<size_t>& rows) {
  Batch b;
  b.images.reserve(rows.size() * data.features);
  for (size_t r : rows) {
    b.images.insert(b.images.end(), data.x.begin() + r * data.features,
                    data.x.begin() + (r + 1) * data.features);
    b.labels.push_back(data.y[r]);
  }
  return b;
}

struct WorkerLog {
  std::vector<double> iteration_s;
  double bytes = 0, loss = 0, accuracy = 0, time_to_target_s = -1;
  double epochs = 0;  // passes over the training set (none in --synthetic)
  int64_t iterations = 0;

  void Record(const pacer::IterationStats& s) {
    iteration_s.push_back(s.total_s);
    bytes += static_cast<double>(s.bytes_out + s.bytes_in);
  }
};

// One iteration's gradient: the mean over the minibatch, or over the tasks this worker got.
double ComputeGradient(pacer::GradientSync& sync, pacer::apps::ResNet& model, const Dataset& train,
                       int workers, int me) {
  model.ZeroGrad();
  if (FLAGS_tasks == 0) {
    const Batch b = Gather(train, pacer::examples::MinibatchRows(train.size(), workers, me,
                                                                 sync.clock(), FLAGS_batch));
    return model.Backward(b.images.data(), b.labels.data(), FLAGS_batch);
  }
  double loss = 0;
  int computed = 0;
  while (std::optional<pacer::Task> task = sync.NextTask()) {
    const Batch b = Gather(train, pacer::examples::TaskRows(train.size(), workers, FLAGS_tasks,
                                                            task->clock, task->id, FLAGS_batch));
    loss += model.Backward(b.images.data(), b.labels.data(), static_cast<int>(b.labels.size()));
    ++computed;
  }
  if (computed > 0) model.ScaleGrad(1.f / static_cast<float>(computed));
  return computed > 0 ? loss / computed : 0;
}

pacer::apps::ResNetOptions ModelOptions() {
  pacer::apps::ResNetOptions options;
  options.arch = FLAGS_arch;
  options.depth = FLAGS_depth;
  options.width = FLAGS_width;
  options.threads = FLAGS_threads;
  return options;
}

// --synthetic: the model's tensors travel, its math is a sleep.
WorkerLog TrainSynthetic(pacer::Session& session, int64_t total) {
  pacer::apps::ResNet model(ModelOptions());
  pacer::GradientSync sync(session);
  for (const auto& p : model.parameters()) sync.Register(p.name, p.values, p.count);
  pacer::bench::Progress progress(session.role_index() == 0, FLAGS_progress, total, total,
                                  static_cast<double>(FLAGS_batch) * session.num_workers(), "img");
  WorkerLog log;
  while (sync.clock() < total) {
    sync.BeginIteration(FLAGS_batch);
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(FLAGS_compute_ms));
    for (const auto& p : model.parameters()) sync.PushPull(p.name, p.grad, p.values);
    sync.EndIteration();
    log.Record(sync.last_iteration());
    progress.Update(sync.clock() - 1, 0, -1);
  }
  progress.Finish();
  log.iterations = sync.clock();
  return log;
}

WorkerLog Train(pacer::Session& session) {
  const Dataset train = pacer::examples::LoadFashionMnist(FLAGS_data, "train");
  const bool evaluator = session.role_index() == 0;
  const Dataset test =
      evaluator ? pacer::examples::LoadFashionMnist(FLAGS_data, "t10k") : Dataset();
  pacer::apps::ResNet model(ModelOptions());
  pacer::GradientSync sync(session);
  for (const auto& p : model.parameters()) sync.Register(p.name, p.values, p.count);
  if (FLAGS_tasks > 0) sync.UseTasks(FLAGS_tasks);

  const int workers = session.num_workers(), me = session.role_index();
  const int64_t per_epoch =
      std::max<int64_t>(1, static_cast<int64_t>(train.size()) / (int64_t{FLAGS_batch} * workers));
  int64_t total = static_cast<int64_t>(FLAGS_epochs * per_epoch);
  if (FLAGS_max_iters > 0) total = std::min(total, FLAGS_max_iters);
  const int64_t eval_every = FLAGS_eval_every > 0 ? FLAGS_eval_every : per_epoch;
  pacer::bench::Progress progress(evaluator, FLAGS_progress, total, per_epoch,
                                  static_cast<double>(FLAGS_batch) * workers, "img");
  WorkerLog log;
  double accuracy = -1;
  const auto start = std::chrono::steady_clock::now();
  auto check = [&] {
    accuracy = model.Accuracy(test.x.data(), test.y.data(), static_cast<int>(test.size()));
    if (log.time_to_target_s < 0 && accuracy >= FLAGS_target_acc) {
      log.time_to_target_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  };
  while (sync.clock() < total) {
    sync.BeginIteration(FLAGS_batch);
    log.loss = ComputeGradient(sync, model, train, workers, me);
    for (const auto& p : model.parameters()) sync.PushPull(p.name, p.grad, p.values);
    sync.EndIteration();
    log.Record(sync.last_iteration());
    const int64_t done = sync.clock();
    if (evaluator && done % eval_every == 0 && done != total) check();  // the last: below
    progress.Update(done - 1, log.loss, accuracy);
  }
  log.iterations = sync.clock();
  log.epochs = static_cast<double>(log.iterations) / static_cast<double>(per_epoch);
  // Asynchronous modes leave workers with different parameters: once all are done, the last ones.
  session.Barrier(pacer::kWorkerGroup);
  sync.Fetch();
  if (evaluator) {
    check();
    log.accuracy = accuracy;
    progress.Update(log.iterations - 1, log.loss, accuracy);
  }
  progress.Finish();
  return log;
}

// Returns whether the final accuracy reached --min-acc (on worker 0; true elsewhere).
bool Summarize(pacer::Session& session, const WorkerLog& mine, MPI_Comm workers) {
  const std::vector<double> all = pacer::bench::GatherAll(workers, mine.iteration_s);
  const std::vector<double> bytes = pacer::bench::SumAtRoot(workers, {mine.bytes});
  if (session.role_index() != 0) return true;
  pacer::bench::Summary s;
  s.model = FLAGS_arch == "small" ? "resnet" + std::to_string(FLAGS_depth) : FLAGS_arch;
  s.workers = session.num_workers();
  s.servers = session.num_servers();
  s.iterations = mine.iterations;
  s.epochs = mine.epochs;
  s.accuracy = mine.accuracy;
  s.loss = mine.loss;
  s.time_to_target_s = mine.time_to_target_s;
  s.iter_p50_ms = pacer::bench::Percentile(all, 0.5) * 1e3;
  s.iter_p99_ms = pacer::bench::Percentile(all, 0.99) * 1e3;
  s.bytes = bytes[0];
  s.samples_per_s =
      s.iter_p50_ms > 0 ? 1e3 * FLAGS_batch * s.workers / s.iter_p50_ms : 0;  // BSP: in step
  std::printf("%s%s\n", s.Text(FLAGS_target_acc).c_str(), s.Json().c_str());
  if (!FLAGS_json.empty()) std::ofstream(FLAGS_json) << s.Json() << "\n";
  if (s.accuracy >= FLAGS_min_acc) return true;
  std::fprintf(stderr, "pacer-resnet: accuracy %.4f is below --min-acc=%.4f\n", s.accuracy,
               FLAGS_min_acc);
  return false;
}

int Run(int argc, char** argv) {
  pacer::bench::UnderscoreFlagNames(argc, argv);
  // A ResNet wants momentum and a larger step than the library's default.
  if (std::getenv("PACER_OPTIMIZER") == nullptr) {
    gflags::SetCommandLineOptionWithMode("optimizer", "sgd:lr=0.05,momentum=0.9",
                                         gflags::SET_FLAGS_DEFAULT);
  }
  pacer::Config config = pacer::Config::ParseCommandLine(&argc, &argv);
  int provided = 0, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!FLAGS_policy.empty()) pacer::bench::ApplyPolicy(FLAGS_policy, &config);
  if (!FLAGS_scenario.empty()) {
    for (const std::string& spec :
         pacer::bench::ScenarioInjects(FLAGS_scenario, size - 1 - config.servers, 10e6, "4s:6s")) {
      config.inject.push_back(spec);
    }
  }
  if (FLAGS_tasks < 0 || (FLAGS_tasks > 0 && FLAGS_batch % FLAGS_tasks != 0)) {
    throw std::invalid_argument("--tasks=" + std::to_string(FLAGS_tasks) +
                                " must divide --batch=" + std::to_string(FLAGS_batch));
  }
  pacer::Session session(config);
  return pacer::bench::RunRoles(session, [&](MPI_Comm workers) {
    const WorkerLog log = FLAGS_synthetic
                              ? TrainSynthetic(session, FLAGS_max_iters > 0 ? FLAGS_max_iters : 20)
                              : Train(session);
    return Summarize(session, log, workers) ? 0 : 1;
  });
}

}  // namespace

int main(int argc, char** argv) {
  return pacer::bench::GuardedMain("pacer-resnet", Run, argc, argv);
}
