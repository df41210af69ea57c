// The scenario harness: softmax regression on Fashion-MNIST, trained through GradientSync under a
// reference straggler scenario (STRAGGLERS.md section 9) and a policy, in seconds.
//
//   mpirun -np 7 build/bin/pacer-scenario --servers 2 --scenario=S1 --policy=backup:1
//          --compute-ms=20 --iters=60 --json=s1-backup.json
//
// S3 caps links (--link-mb-s), S4 slows server 0 in --server-window (from 4 s to 10 s). Each
// iteration is --tasks micro-batches per worker (GradientSync::NextTask: under --policy=epsp:S the
// scheduler hands them out, elsewhere each worker computes its own); for each task a worker sleeps
// --compute-ms / --tasks (the compute of a larger model), then computes the micro-batch's
// gradient, and it pushes the mean of its tasks' gradients; --model-mb adds the larger model's
// size, --server-mb-s caps every server's service rate (a server-bound job, where S4 shows).
// Worker 0 measures test accuracy every --eval-every iterations. The summary gives the mean and
// percentiles of iteration times over every worker's iterations, the fraction of time blocked in
// synchronization (waiting for task grants included), tasks moved, final accuracy, time to
// --target-acc, bytes moved and worker-seconds.
#include <gflags/gflags.h>
#include <mpi.h>
#include <pacer/error.h>
#include <pacer/gradient_sync.h>
#include <pacer/parameter_server.h>
#include <pacer/relay_control.h>
#include <pacer/session.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "app_roles.h"
#include "fashion_mnist.h"
#include "flag_names.h"
#include "percentile.h"
#include "scenario_presets.h"
#include "softmax_regression.h"
#include "task_gradients.h"
#include "worker_gather.h"

DEFINE_string(scenario, "S6",
              "S1..S7, S3-all, S3-two, S8, S8-job2 or S8-small (STRAGGLERS.md section 9)");
DEFINE_double(link_mb_s, 0,
              "every worker's links to and from the servers in MB/s (0: unshaped; the S3 scenarios "
              "default to 5), worker 0's at --slow-link-share of it under S3 and S3-all, workers 0 "
              "and 1's under S3-two");
DEFINE_double(slow_link_share, 0.25, "S3 and its variants: the slow links' share of --link-mb-s");
DEFINE_double(server_mb_s, 0,
              "every server's emulated service rate in MB/s of work (0: their own speed); S4 "
              "slows server 0 to a third of it");
DEFINE_string(policy, "bsp",
              "bsp, asp, ssp:S, backup:B, dynsgd, consgd, epsp:S, sas, stret, sms, strn, auto "
              "(every mitigation), or several joined by '+' (sms+stret)");
DEFINE_int32(tasks, 8, "tasks (micro-batches) per worker and iteration; --batch is a multiple");
DEFINE_string(server_window, "4s:6s", "S4: when server 0 is slow, START:LENGTH since the start");
DEFINE_double(stage_s, 4, "S7: how long each kind of straggler lasts, in seconds");
DEFINE_int32(iters, 100, "iterations (clocks) to train");
DEFINE_double(target_acc, 0.8, "test accuracy whose first time is reported");
DEFINE_double(compute_ms, 20, "emulated compute time per iteration");
DEFINE_double(model_mb, 0,
              "the size of the model that --compute-ms stands for: a tensor of this many MB of "
              "parameters travels with the softmax's each iteration, its gradient zero, or under "
              "sms the softmax weights' repeated (S3 and its variants: 1 by default)");
DEFINE_int32(batch, 64, "samples per worker and iteration");
DEFINE_double(lr, 0.1, "learning rate of the servers' SGD");
DEFINE_double(momentum, 0, "momentum of the servers' SGD (state that moves with a key range)");
DEFINE_int32(eval_every, 10, "iterations between worker 0's accuracy checks");
DEFINE_int32(eval_samples, 2000, "test samples of the periodic checks (the final one uses all)");
DEFINE_string(json, "", "write the summary here");
DEFINE_string(relay, "",
              "STRAGGLER:PARTNER (worker indices): the scheduler relays the straggler's gradients "
              "through the partner from the start (STRET's relay, fixed)");
DEFINE_string(data, pacer::examples::kFashionMnistDir, "Fashion-MNIST directory");

namespace {

using pacer::examples::Dataset;
using pacer::examples::SoftmaxRegression;

struct WorkerLog {
  std::vector<double> iteration_s;
  double blocked_s = 0, total_s = 0, bytes = 0, tasks = 0, tasks_transferred = 0;
};

// Trains; returns this worker's log. Worker 0 also tracks accuracy.
WorkerLog Train(pacer::Session& session, double* accuracy, double* time_to_target) {
  const Dataset train = pacer::examples::LoadFashionMnist(FLAGS_data, "train");
  const bool evaluator = session.role_index() == 0;
  Dataset test;
  if (evaluator) test = pacer::examples::LoadFashionMnist(FLAGS_data, "t10k");
  Dataset eval = test;
  eval.x.resize(std::min<size_t>(test.size(), FLAGS_eval_samples) * test.features);
  eval.y.resize(std::min<size_t>(test.size(), FLAGS_eval_samples));
  SoftmaxRegression model(train.features, train.classes);
  std::vector<float> w(model.weights_size()), b(model.biases_size());
  std::vector<float> gw(w.size()), gb(b.size());
  const size_t ballast_floats = static_cast<size_t>(FLAGS_model_mb * 1e6 / sizeof(float));
  std::vector<float> ballast(ballast_floats), ballast_gradient(ballast_floats);
  pacer::GradientSync sync(session);
  sync.Register("weights", w.data(), w.size());
  sync.Register("biases", b.data(), b.size());
  if (ballast_floats > 0) sync.Register("ballast", ballast.data(), ballast.size());
  sync.UseTasks(FLAGS_tasks);
  // STRET's batch tuning may give a slow worker a smaller batch: a multiple of the tasks.
  std::vector<int> batch_sizes;
  for (int size = FLAGS_tasks; size <= FLAGS_batch; size += FLAGS_tasks)
    batch_sizes.push_back(size);
  sync.AllowBatchSizes(batch_sizes);
  WorkerLog log;
  const auto start = std::chrono::steady_clock::now();
  *time_to_target = -1;
  for (int64_t i = 0; sync.clock() < FLAGS_iters; ++i) {
    sync.BeginIteration(FLAGS_batch);
    const int batch = sync.batch_size(FLAGS_batch);
    // Compute in proportion to the samples: --compute-ms is a whole --batch's.
    const double task_ms = FLAGS_compute_ms * batch / FLAGS_batch / FLAGS_tasks;
    pacer::examples::TaskGradients(
        sync, train, model, session.num_workers(), FLAGS_tasks, batch, w, b, gw, gb,
        [&sync, task_ms](const pacer::Task&) { sync.EmulateCompute(task_ms); });
    sync.PushPull("weights", gw.data(), w.data());
    sync.PushPull("biases", gb.data(), b.data());
    if (ballast_floats > 0) {
      // Under SMS, whose skip judges how a gradient changes between iterations, the larger
      // model's changes as the softmax's does; elsewhere it stays zero (copying 256 MB, SAS's
      // model, would add to every iteration's compute).
      if (session.config().predicted_policy == "sms") {
        for (size_t at = 0; at < ballast_floats; at += gw.size()) {
          std::copy_n(gw.begin(), std::min(gw.size(), ballast_floats - at),
                      ballast_gradient.begin() + static_cast<std::ptrdiff_t>(at));
        }
      }
      sync.PushPull("ballast", ballast_gradient.data(), ballast.data());
    }
    sync.EndIteration();
    const pacer::IterationStats& s = sync.last_iteration();
    log.iteration_s.push_back(s.total_s);
    log.blocked_s += s.wait_s + s.task_wait_s;
    log.tasks += static_cast<double>(s.tasks);
    log.tasks_transferred += static_cast<double>(s.tasks_transferred);
    log.total_s += s.total_s;
    log.bytes += static_cast<double>(s.bytes_out + s.bytes_in);
    if (evaluator && (i + 1) % FLAGS_eval_every == 0) {
      const double accuracy_now = model.Accuracy(eval, w.data(), b.data());
      sync.ReportAccuracy(accuracy_now);  // training's progress, for the scheduler's policies
      if (*time_to_target < 0 && accuracy_now >= FLAGS_target_acc) {
        *time_to_target =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    }
  }
  // Asynchronous modes leave workers with different parameters: once all are done, fetch the
  // final ones.
  session.Barrier(pacer::kWorkerGroup);
  sync.Fetch();
  if (evaluator) *accuracy = model.Accuracy(test, w.data(), b.data());
  return log;
}

// What a server's keys received: pushes (a relayed one carries several workers' gradients) and
// gradients, per key (the least and the most), for the relay's counts.
void PrintPushes(pacer::Session& session, pacer::ParameterServer& server) {
  int64_t pushes[2] = {INT64_MAX, 0}, gradients[2] = {INT64_MAX, 0};
  const std::map<pacer::Key, pacer::ParameterServer::KeyStats> keys = server.Keys();
  for (const auto& [key, stats] : keys) {
    pushes[0] = std::min(pushes[0], stats.pushes);
    pushes[1] = std::max(pushes[1], stats.pushes);
    gradients[0] = std::min(gradients[0], stats.applied + stats.dropped);
    gradients[1] = std::max(gradients[1], stats.applied + stats.dropped);
  }
  if (keys.empty()) return;
  std::printf("server %d: %zu keys, pushes per key %lld..%lld, gradients per key %lld..%lld\n",
              session.role_index(), keys.size(), static_cast<long long>(pushes[0]),
              static_cast<long long>(pushes[1]), static_cast<long long>(gradients[0]),
              static_cast<long long>(gradients[1]));
}

void Summarize(pacer::Session& session, const WorkerLog& mine, MPI_Comm workers, double accuracy,
               double time_to_target) {
  // Every worker's iteration times, and its blocked, total and bytes, at worker 0.
  const pacer::bench::LiveWorkers live(session, workers);
  const int n = live.size();
  const std::vector<double> all = pacer::bench::GatherAll(live.comm(), mine.iteration_s);
  const std::vector<double> sums = pacer::bench::SumAtRoot(
      live.comm(), {mine.blocked_s, mine.total_s, mine.bytes, mine.tasks_transferred});
  const std::vector<double> tasks = pacer::bench::GatherAll(
      live.comm(), {mine.tasks / std::max<size_t>(1, mine.iteration_s.size())});
  if (session.role_index() != 0) return;
  const double wall = mine.total_s;
  const double mean =
      std::accumulate(all.begin(), all.end(), 0.0) / std::max<size_t>(1, all.size());
  // Ten digits: std::to_string's six made 91/30 + 286/30 + 292/30 + 291/30 sum to 31.999999.
  std::string tasks_json;
  for (double t : tasks) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", t);
    tasks_json += (tasks_json.empty() ? "" : ",") + std::string(text);
  }
  char json[1536];
  std::snprintf(json, sizeof(json),
                "{\"scenario\":\"%s\",\"policy\":\"%s\",\"workers\":%d,\"servers\":%d,\"iters\":%d,"
                "\"iter_mean_ms\":%.3f,\"iter_p50_ms\":%.3f,\"iter_p99_ms\":%.3f,"
                "\"blocked_frac\":%.4f,\"tasks_per_iter\":[%s],\"tasks_moved\":%.0f,"
                "\"accuracy\":%.4f,\"time_to_target_s\":%s,\"bytes\":%.0f,\"worker_seconds\":%.3f}",
                FLAGS_scenario.c_str(), FLAGS_policy.c_str(), n, session.num_servers(), FLAGS_iters,
                mean * 1e3, pacer::bench::Percentile(all, 0.5) * 1e3,
                pacer::bench::Percentile(all, 0.99) * 1e3, sums[0] / sums[1], tasks_json.c_str(),
                sums[3], accuracy,
                time_to_target < 0 ? "null" : std::to_string(time_to_target).c_str(), sums[2],
                n * (time_to_target < 0 ? wall : time_to_target));
  std::printf(
      "scenario %s, policy %s: %d workers, %d servers, %d iterations\n"
      "  iteration mean %.2f ms, p50 %.2f ms, p99 %.2f ms; blocked %.1f%% of the time\n"
      "  tasks per iteration by worker [%s], %.0f moved\n"
      "  accuracy %.4f; time to %.2f accuracy %s; %.1f MB moved\n%s\n",
      FLAGS_scenario.c_str(), FLAGS_policy.c_str(), n, session.num_servers(), FLAGS_iters,
      mean * 1e3, pacer::bench::Percentile(all, 0.5) * 1e3,
      pacer::bench::Percentile(all, 0.99) * 1e3, 100 * sums[0] / sums[1], tasks_json.c_str(),
      sums[3], accuracy, FLAGS_target_acc,
      time_to_target < 0 ? "not reached" : (std::to_string(time_to_target) + " s").c_str(),
      sums[2] / 1e6, json);
  if (!FLAGS_json.empty()) std::ofstream(FLAGS_json) << json << "\n";
}

int Run(int argc, char** argv) {
  pacer::bench::UnderscoreFlagNames(argc, argv);
  // The model is 31 KB: in 8 KB keys its load spreads over the servers (S4 slows one of them).
  if (std::getenv("PACER_PARTITION_BYTES") == nullptr) {
    gflags::SetCommandLineOptionWithMode("partition_bytes", "8192", gflags::SET_FLAGS_DEFAULT);
  }
  pacer::Config config = pacer::Config::ParseCommandLine(&argc, &argv);
  int provided = 0, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);  // the presets need the size
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  pacer::bench::ApplyPolicy(FLAGS_policy, &config);
  // S3 is a communication straggler: a model of 1 MB makes its links the iteration's cost.
  if (FLAGS_scenario.rfind("S3", 0) == 0 &&
      gflags::GetCommandLineFlagInfoOrDie("model_mb").is_default) {
    FLAGS_model_mb = 1;
  }
  config.optimizer = "sgd:lr=" + std::to_string(FLAGS_lr) +
                     (FLAGS_momentum > 0 ? ",momentum=" + std::to_string(FLAGS_momentum) : "");
  const pacer::bench::JobShape job{size - 1 - config.servers, config.servers,
                                   FLAGS_link_mb_s * 1e6,     FLAGS_server_window,
                                   FLAGS_slow_link_share,     FLAGS_stage_s};
  for (const std::string& spec : pacer::bench::ScenarioInjects(FLAGS_scenario, job)) {
    config.inject.push_back(spec);
  }
  if (FLAGS_server_mb_s > 0) {
    config.inject.push_back("server:*:rate=" + std::to_string(FLAGS_server_mb_s) + "MB/s");
  }
  // A trace's times scale so that its median is --compute_ms; the apps, whose compute is real,
  // slow a worker to its ratio to the iteration's fastest.
  for (std::string& spec : config.inject) {
    if (spec.rfind("trace:", 0) == 0 && spec.find(":to=") == std::string::npos) {
      spec += ":to=median";
    }
  }
  int straggler = -1, partner = -1;
  if (!FLAGS_relay.empty()) {
    int used = 0;
    if (std::sscanf(FLAGS_relay.c_str(), "%d:%d%n", &straggler, &partner, &used) != 2 ||
        used != static_cast<int>(FLAGS_relay.size()) || partner < 0) {
      throw std::invalid_argument("--relay=" + FLAGS_relay +
                                  ": expected STRAGGLER:PARTNER, two worker indices");
    }
    try {
      pacer::RelayControl::Check(straggler, partner, job.workers);
    } catch (const pacer::Error& e) {
      throw std::invalid_argument("--relay=" + FLAGS_relay + ": " + e.what());
    }
  }
  pacer::Session session(config);
  return pacer::bench::RunRoles(
      session,
      [&](MPI_Comm workers) {
        double accuracy = 0, time_to_target = -1;
        WorkerLog log = Train(session, &accuracy, &time_to_target);
        Summarize(session, log, workers, accuracy, time_to_target);
        return 0;
      },
      [&] {
        if (straggler >= 0) pacer::RelayControl(session).Relay(straggler, partner);
      },
      [&](pacer::ParameterServer& server) { PrintPushes(session, server); });
}

}  // namespace

int main(int argc, char** argv) {
  return pacer::bench::GuardedMain("pacer-scenario", Run, argc, argv);
}
