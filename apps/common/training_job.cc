#include "training_job.h"

#include <gflags/gflags.h>
#include <mpi.h>
#include <pacer/gradient_sync.h>
#include <pacer/session.h>
#include <pacer/sync_mode.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "app_roles.h"
#include "batch_shrink.h"
#include "flag_names.h"
#include "learning_rate_steps.h"
#include "percentile.h"
#include "scenario_presets.h"
#include "softmax_regression.h"
#include "training_report.h"
#include "worker_gather.h"

DEFINE_int32(batch, 32, "samples per worker and iteration");
DEFINE_int32(tasks, 0, "micro-batches per worker and iteration (0: no tasks); divides --batch");
DEFINE_double(epochs, 4, "passes over the training set");
DEFINE_int64(max_iters, 0, "stop at this iteration (0: --epochs decides)");
DEFINE_int64(eval_every, 0, "iterations between worker 0's evaluations (0: each epoch)");
DEFINE_double(target_acc, 0.9, "held-out accuracy whose first time is reported");
DEFINE_double(min_acc, 0, "the job fails (exit 1) if worker 0's final accuracy is lower");
DEFINE_string(policy, "",
              "a straggler policy of the scenario harness (bsp, epsp:0, sas, stret, sms, strn, "
              "auto: every mitigation, or several joined by '+')");
DEFINE_string(scenario, "", "a reference straggler scenario, S1..S8 (STRAGGLERS.md section 9)");
DEFINE_string(json, "", "write the summary here");
DEFINE_bool(synthetic, false,
            "no model math: the model's tensors with zero gradients and --compute-ms of emulated "
            "compute per iteration, for communication benchmarks");
DEFINE_double(compute_ms, 100, "--synthetic: emulated compute per iteration");
DEFINE_string(progress, "auto", "worker 0's progress: bar, lines, or auto (a bar on a terminal)");
DEFINE_string(checkpoint_dir, "",
              "write a checkpoint here after each evaluation and at the end (the servers' state "
              "in parameters.ckpt, each worker's model in worker-N.state)");
DEFINE_bool(resume, false, "start from the checkpoint in --checkpoint-dir");
DEFINE_string(lr_decay_at, "",
              "fractions of --epochs where the servers' learning rate drops by --optimizer's "
              "lr_factor (default 0.1), e.g. 0.5,0.75");

namespace pacer {
namespace apps {
namespace {

struct WorkerLog {
  std::vector<double> iteration_s;
  double bytes = 0, loss = 0, accuracy = 0, time_to_target_s = -1;
  double epochs = 0;  // passes over the training set (none in --synthetic)
  int64_t iterations = 0;
  bench::TaskCount tasks;

  void Record(const IterationStats& s) {
    iteration_s.push_back(s.total_s);
    bytes += static_cast<double>(s.bytes_out + s.bytes_in);
    tasks.computed += s.tasks;
    tasks.moved_in += s.tasks_transferred;
    tasks.share += s.task_share;
  }
};

// Iterations per epoch and in the run; --epochs plans the run, --max-iters may stop it earlier.
struct Plan {
  int64_t per_epoch = 1, planned = 0, total = 0;
};

Plan MakePlan(size_t train_size, int workers) {
  Plan plan;
  plan.per_epoch =
      std::max<int64_t>(1, static_cast<int64_t>(train_size) / (int64_t{FLAGS_batch} * workers));
  plan.planned = static_cast<int64_t>(FLAGS_epochs * static_cast<double>(plan.per_epoch));
  plan.total = FLAGS_max_iters > 0 ? std::min(plan.planned, FLAGS_max_iters) : plan.planned;
  return plan;
}

// Seeds a computation's randomness by what it computes, not by who: a task moved to another
// worker, or recomputed after a resume, draws the same.
uint64_t Seed(int64_t clock, int64_t part) {
  return static_cast<uint64_t>(clock) * 1000003u + static_cast<uint64_t>(part);
}

// The share of the training set a worker walks: one of the live workers', so that a job that lost
// a worker still trains on the whole set. (With tasks the shares stay: the task authority hands a
// lost worker's tasks to the others.)
struct Share {
  int of = 1, index = 0;
};
Share LiveShare(const Session& session) {
  const std::vector<int> excluded = session.excluded_workers();
  const int me = session.role_index();
  const auto before_me =
      std::count_if(excluded.begin(), excluded.end(), [me](int w) { return w < me; });
  return {session.num_workers() - static_cast<int>(excluded.size()),
          me - static_cast<int>(before_me)};
}

// One iteration's gradient: the mean over the minibatch (or as much of it as this worker was
// ordered to run), or over the tasks this worker got.
double ComputeGradient(const Session& session, GradientSync& sync, Workload& model,
                       int fixed_batch) {
  model.ZeroGrad();
  const int me = session.role_index();
  const size_t samples = model.train_size();
  const int workers = session.num_workers();
  if (FLAGS_tasks == 0) {
    const Share share = LiveShare(session);
    std::vector<size_t> rows =
        examples::MinibatchRows(samples, share.of, share.index, sync.clock(), FLAGS_batch);
    const int ordered = sync.batch_size(FLAGS_batch);
    const int batch = std::min(fixed_batch, ordered);
    // --shrink's share of the size ordered (whose own weight is ordered / --batch).
    sync.set_weight(static_cast<double>(batch) / ordered);
    if (batch < static_cast<int>(rows.size())) {
      rows = ShrinkRows(model, rows, batch, Seed(sync.clock(), me) ^ 0x5a5a);
    }
    return model.Backward(rows, Seed(sync.clock(), share.index));
  }
  double loss = 0;
  int computed = 0;
  while (std::optional<Task> task = sync.NextTask()) {
    loss += model.Backward(
        examples::TaskRows(samples, workers, FLAGS_tasks, task->clock, task->id, FLAGS_batch),
        Seed(task->clock, task->id));
    ++computed;
  }
  if (computed > 0) model.ScaleGrad(1.f / static_cast<float>(computed));
  return computed > 0 ? loss / computed : 0;
}

std::string CheckpointPath(const std::string& file) {
  return (std::filesystem::path(FLAGS_checkpoint_dir) / file).string();
}
// A worker's state is named by its clock: a job killed between one worker's state and the servers'
// checkpoint then leaves the state that matches parameters.ckpt, which names the clock it holds.
std::string WorkerStatePath(int worker, int64_t clock) {
  return CheckpointPath("worker-" + std::to_string(worker) + "-at-" + std::to_string(clock) +
                        ".state");
}

void SaveCheckpoint(GradientSync& sync, Workload& model, int me) {
  std::filesystem::create_directories(FLAGS_checkpoint_dir);
  const std::string state = WorkerStatePath(me, sync.clock());
  model.Save(state);
  sync.Checkpoint(CheckpointPath("parameters.ckpt"));
  // parameters.ckpt is at this clock now (every worker has passed its rename): older states go.
  const std::string prefix = "worker-" + std::to_string(me) + "-at-";
  for (const auto& entry : std::filesystem::directory_iterator(FLAGS_checkpoint_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().string() != state) {
      std::filesystem::remove(entry.path());
    }
  }
}

void Register(GradientSync& sync, Workload& model) {
  for (const Parameter& p : model.parameters()) sync.Register(p.name, p.values, p.count);
}

// --synthetic: the model's tensors travel, its math is a sleep.
WorkerLog TrainSynthetic(Session& session, Workload& model, const TrainingApp& app) {
  const int64_t total = FLAGS_max_iters > 0 ? FLAGS_max_iters : 20;
  GradientSync sync(session);
  Register(sync, model);
  bench::Progress progress(
      session.role_index() == 0, FLAGS_progress, total, total,
      static_cast<double>(FLAGS_batch) * session.num_workers() * app.units_per_sample(), app.unit);
  WorkerLog log;
  while (sync.clock() < total) {
    sync.BeginIteration(FLAGS_batch);
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(FLAGS_compute_ms));
    for (const Parameter& p : model.parameters()) sync.PushPull(p.name, p.grad, p.values);
    sync.EndIteration();
    log.Record(sync.last_iteration());
    progress.Update(sync.clock() - 1, 0, -1);
  }
  progress.Finish();
  log.iterations = sync.clock();
  return log;
}

WorkerLog Train(Session& session, Workload& model, const TrainingApp& app) {
  const bool evaluator = session.role_index() == 0;
  const int workers = session.num_workers(), me = session.role_index();
  GradientSync sync(session);
  Register(sync, model);
  if (FLAGS_tasks > 0) {
    sync.UseTasks(FLAGS_tasks);
  } else {
    sync.AllowBatchSizes(ShrinkSizes(FLAGS_batch));
  }
  const int fixed_batch = FixedShrink(me, FLAGS_batch);
  if (FLAGS_resume) {
    sync.Resume(CheckpointPath("parameters.ckpt"));
    model.Load(WorkerStatePath(me, sync.clock()));
  }
  const Plan plan = MakePlan(model.train_size(), workers);
  const int64_t per_epoch = plan.per_epoch, total = plan.total;
  const int64_t eval_every = FLAGS_eval_every > 0 ? FLAGS_eval_every : per_epoch;
  bench::Progress progress(evaluator, FLAGS_progress, total, per_epoch,
                           static_cast<double>(FLAGS_batch) * workers * app.units_per_sample(),
                           app.unit);
  WorkerLog log;
  double accuracy = -1;
  const auto start = std::chrono::steady_clock::now();
  auto evaluate = [&] {
    accuracy = model.Evaluate();
    sync.ReportAccuracy(accuracy);  // training's progress, for the scheduler's policies
    if (log.time_to_target_s < 0 && accuracy >= FLAGS_target_acc) {
      log.time_to_target_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  };
  while (sync.clock() < total) {
    sync.BeginIteration(FLAGS_batch);
    log.loss = ComputeGradient(session, sync, model, fixed_batch);
    for (const Parameter& p : model.parameters()) sync.PushPull(p.name, p.grad, p.values);
    sync.EndIteration();
    log.Record(sync.last_iteration());
    const int64_t done = sync.clock();
    if (done % eval_every == 0 && done != total) {  // the last one: below
      if (evaluator) evaluate();
      if (!FLAGS_checkpoint_dir.empty()) SaveCheckpoint(sync, model, me);
    }
    progress.Update(done - 1, log.loss, accuracy);
  }
  log.iterations = sync.clock();
  log.epochs = static_cast<double>(log.iterations) / static_cast<double>(per_epoch);
  // Asynchronous modes leave workers with different parameters: once all are done, the last ones.
  session.Barrier(kWorkerGroup);
  sync.Fetch();
  if (!FLAGS_checkpoint_dir.empty()) SaveCheckpoint(sync, model, me);
  if (evaluator) {
    evaluate();
    log.accuracy = accuracy;
    progress.Update(log.iterations - 1, log.loss, accuracy);
  }
  progress.Finish();
  return log;
}

// Returns whether the final accuracy reached --min-acc (on worker 0; true elsewhere).
bool Summarize(Session& session, const Workload& model, const TrainingApp& app,
               const WorkerLog& mine, MPI_Comm workers) {
  const bench::LiveWorkers live(session, workers);
  const std::vector<double> all = bench::GatherAll(live.comm(), mine.iteration_s);
  const std::vector<double> bytes = bench::SumAtRoot(live.comm(), {mine.bytes});
  const std::vector<double> tasks =
      bench::GatherAll(live.comm(), {static_cast<double>(mine.tasks.computed),
                                     static_cast<double>(mine.tasks.moved_in),
                                     static_cast<double>(mine.tasks.share)});
  if (session.role_index() != 0) return true;
  bench::Summary s;
  s.model = model.name();
  s.unit = app.unit;
  s.workers = live.size();
  s.servers = session.num_servers();
  s.iterations = mine.iterations;
  s.epochs = mine.epochs;
  s.accuracy = mine.accuracy;
  s.loss = mine.loss;
  s.time_to_target_s = mine.time_to_target_s;
  s.target_accuracy = FLAGS_target_acc;
  s.target_given = !gflags::GetCommandLineFlagInfoOrDie("target_acc").is_default;
  s.injected = session.config().inject;
  for (size_t i = 0; i + 2 < tasks.size(); i += 3) {
    s.tasks.push_back({static_cast<int64_t>(tasks[i]), static_cast<int64_t>(tasks[i + 1]),
                       static_cast<int64_t>(tasks[i + 2])});
  }
  s.iter_p50_ms = bench::Percentile(all, 0.5) * 1e3;
  s.iter_p99_ms = bench::Percentile(all, 0.99) * 1e3;
  s.bytes = bytes[0];
  // BSP keeps the workers in step: the median iteration moves every worker's batch.
  s.samples_per_s = s.iter_p50_ms > 0
                        ? 1e3 * FLAGS_batch * s.workers * app.units_per_sample() / s.iter_p50_ms
                        : 0;
  std::printf("%s%s\n", s.Text().c_str(), s.Json().c_str());
  if (!FLAGS_json.empty()) std::ofstream(FLAGS_json) << s.Json() << "\n";
  if (s.accuracy >= FLAGS_min_acc) return true;
  std::fprintf(stderr, "%s: accuracy %.4f is below --min-acc=%.4f\n", app.program, s.accuracy,
               FLAGS_min_acc);
  return false;
}

// A flag's environment variable, as Config reads it: PACER_ and the name in capitals.
bool SetInEnvironment(const std::string& flag) {
  std::string name = "PACER_";
  for (char c : flag) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return std::getenv(name.c_str()) != nullptr;
}

void CheckFlags() {
  if (FLAGS_tasks < 0 || (FLAGS_tasks > 0 && FLAGS_batch % FLAGS_tasks != 0)) {
    throw std::invalid_argument("--tasks=" + std::to_string(FLAGS_tasks) +
                                " must divide --batch=" + std::to_string(FLAGS_batch));
  }
  if (FLAGS_resume && FLAGS_checkpoint_dir.empty()) {
    throw std::invalid_argument("--resume needs --checkpoint-dir (where the checkpoint is)");
  }
  if (FLAGS_synthetic && (FLAGS_resume || !FLAGS_checkpoint_dir.empty())) {
    throw std::invalid_argument("--synthetic trains nothing to checkpoint");
  }
}

// Every worker checkpoints at the same clock; backup workers skip clocks.
void CheckCheckpointMode(const Config& config) {
  if (!FLAGS_checkpoint_dir.empty() &&
      SyncMode::Starting(config.sync).kind == SyncMode::Kind::kBackup) {
    throw std::invalid_argument("--checkpoint-dir with --sync=" + config.sync +
                                ": backup workers skip clocks, and a checkpoint needs every "
                                "worker at the same one");
  }
}

}  // namespace

int RunTrainingApp(int argc, char** argv, const TrainingApp& app) {
  bench::UnderscoreFlagNames(argc, argv);
  for (const auto& [flag, value] : app.defaults) {
    if (!SetInEnvironment(flag)) {
      gflags::SetCommandLineOptionWithMode(flag.c_str(), value.c_str(), gflags::SET_FLAGS_DEFAULT);
    }
  }
  Config config = Config::ParseCommandLine(&argc, &argv);
  CheckFlags();
  int provided = 0, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!FLAGS_policy.empty()) bench::ApplyPolicy(FLAGS_policy, &config);
  if (!FLAGS_scenario.empty()) {
    for (const std::string& spec :
         bench::ScenarioInjects(FLAGS_scenario, {size - 1 - config.servers, config.servers})) {
      config.inject.push_back(spec);
    }
  }
  CheckCheckpointMode(config);
  // The servers' schedule needs the run's length, which the data set sets. Which ranks work is
  // known once the Session has placed the servers, so the scheduler (rank 0) reads the data set's
  // size and tells every rank.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int num_workers = size - 1 - config.servers;
  if (num_workers < 1) {
    throw std::invalid_argument(std::to_string(size) + " ranks leave no worker after the " +
                                "scheduler and " + std::to_string(config.servers) + " servers");
  }
  CheckShrinkFlags(num_workers, FLAGS_batch, FLAGS_tasks > 0);
  int64_t planned = 0;
  if (rank == 0 && !FLAGS_synthetic) {
    planned = MakePlan(app.make(false, false)->train_size(), num_workers).planned;
  }
  MPI_Bcast(&planned, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  config.optimizer = WithLearningRateSteps(
      config.optimizer, FLAGS_synthetic ? "" : FLAGS_lr_decay_at,
      !gflags::GetCommandLineFlagInfoOrDie("lr_decay_at").is_default, planned);
  Session session(config);
  std::unique_ptr<Workload> model;
  if (session.is_worker()) model = app.make(session.role_index() == 0, FLAGS_synthetic);
  return bench::RunRoles(session, [&](MPI_Comm workers) {
    const WorkerLog log =
        FLAGS_synthetic ? TrainSynthetic(session, *model, app) : Train(session, *model, app);
    return Summarize(session, *model, app, log, workers) ? 0 : 1;
  });
}

}  // namespace apps
}  // namespace pacer
