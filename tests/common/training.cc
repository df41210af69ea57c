#include "training.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "pacer/error.h"
#include "pacer/gradient_sync.h"
#include "pacer/migration_control.h"
#include "pacer/parameter_server.h"
#include "pacer/relay_control.h"
#include "pacer/sync_control.h"
#include "softmax_regression.h"
#include "task_gradients.h"

namespace pacer {
namespace testing {
namespace {

using examples::Dataset;
using examples::MinibatchRows;
using examples::SoftmaxRegression;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Model {
  std::vector<float> w, b;
};

Model InitialModel(const SoftmaxRegression& model, unsigned seed) {
  Model m{std::vector<float>(model.weights_size()), std::vector<float>(model.biases_size())};
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 0.1f);
  for (float& v : m.w) v = normal(rng);
  return m;
}

// BSP in one process: the mean of every worker's minibatch gradient, summed in worker order,
// applied by the same float operations as the servers' SGD step.
Model Reference(const Dataset& data, const SoftmaxRegression& model, int workers,
                const TrainingOptions& o) {
  Model m = InitialModel(model, 0);
  std::vector<float> gw(m.w.size()), gb(m.b.size()), sw, sb;
  for (int i = 0; i < o.iterations; ++i) {
    sw.assign(m.w.size(), 0.f);
    sb.assign(m.b.size(), 0.f);
    for (int j = 0; j < workers; ++j) {
      model.Loss(data, MinibatchRows(data.size(), workers, j, i, o.batch), m.w.data(), m.b.data(),
                 gw.data(), gb.data());
      for (size_t k = 0; k < sw.size(); ++k) sw[k] += gw[k];
      for (size_t k = 0; k < sb.size(); ++k) sb[k] += gb[k];
    }
    const float scale = static_cast<float>(1.0 / workers);
    for (size_t k = 0; k < sw.size(); ++k) m.w[k] -= o.lr * (sw[k] * scale);
    for (size_t k = 0; k < sb.size(); ++k) m.b[k] -= o.lr * (sb[k] * scale);
  }
  return m;
}

// SSP's read rule from the workers' own clocks: when worker j started clock c, every worker had
// issued its push of clock c - s - 1. Returns the largest gap seen between a worker starting a
// clock and the slowest worker's pushes issued by then.
int CheckStaleness(const std::vector<double>& starts, const std::vector<double>& issues,
                   int workers, int iterations, int bound) {
  int max_gap = 0;
  for (int j = 0; j < workers; ++j) {
    for (int c = 1; c < iterations; ++c) {
      const double start = starts[j * iterations + c];
      for (int k = 0; k < workers; ++k) {
        int pushed = 0;  // pushes worker k had issued before worker j started clock c
        while (pushed < iterations && issues[k * iterations + pushed] < start) ++pushed;
        max_gap = std::max(max_gap, c - pushed);
        EXPECT_LE(c - pushed, bound) << "worker " << j << " started clock " << c << " when worker "
                                     << k << " had pushed " << pushed << " clocks";
      }
    }
  }
  return max_gap;
}

// Each task of each clock was computed once: its counter moved by one task's step, -lr / (workers
// x tasks per worker) as in BSP (and EPSP), -lr / tasks per worker in the other on-arrival modes.
// Under epsp the slow worker computed less than a third of its share (elastic shares and
// transfers; `computed`: each worker's count); elsewhere every worker computed its own share.
void CheckTasks(Session& session, GradientSync& sync, const TrainingOptions& o,
                const std::vector<float>& counts, const std::vector<double>& computed) {
  session.Barrier(kWorkerGroup);  // on-arrival rules: every push applied before the fetch
  sync.Fetch();
  const SyncMode mode = SyncMode::Parse(session.config().sync);
  const int per_clock = session.num_workers() * o.tasks_per_worker;
  const bool whole_step = mode.on_arrival() && mode.kind != SyncMode::Kind::kEpsp;
  const double step = o.lr / (whole_step ? o.tasks_per_worker : per_clock);
  int wrong = 0;
  for (size_t i = 0; i < counts.size() && wrong < 5; ++i) {
    if (std::abs(counts[i] + step) > 1e-4 * step) {
      ADD_FAILURE() << "task " << i % per_clock << " of clock " << i / per_clock << ": counter "
                    << counts[i] << ", expected " << -step << " (computed once)";
      ++wrong;
    }
  }
  const double share = static_cast<double>(o.tasks_per_worker) * o.iterations;
  for (int w = 0; w < session.num_workers(); ++w) {
    if (mode.kind == SyncMode::Kind::kEpsp && w == o.slow_worker) {
      EXPECT_LT(computed[w], share / 3) << "the slow worker computed most of its share";
    } else if (mode.kind != SyncMode::Kind::kEpsp) {
      EXPECT_EQ(computed[w], share) << "worker " << w << " outside epsp";
    }
  }
}

// Computes every task this worker gets in the iteration (the slow worker sleeping for each):
// the mean of their gradients into gw, gb, and into counts_grad a 1 at each task's (clock, id)
// over the tasks computed.
void ComputeTasks(GradientSync& sync, const Dataset& data, const SoftmaxRegression& model,
                  const TrainingOptions& o, int workers, bool slow, Model& m,
                  std::vector<float>& gw, std::vector<float>& gb, std::vector<float>& counts_grad) {
  std::fill(counts_grad.begin(), counts_grad.end(), 0.f);
  const int computed = examples::TaskGradients(
      sync, data, model, workers, o.tasks_per_worker, o.batch, m.w, m.b, gw, gb,
      [&](const Task& task) {
        counts_grad[task.clock * workers * o.tasks_per_worker + task.id] += 1;
        if (slow) {
          std::this_thread::sleep_for(
              std::chrono::microseconds(o.slow_ms * 1000 / o.tasks_per_worker));
        }
      });
  for (float& v : counts_grad) v /= static_cast<float>(std::max(computed, 1));
}

void Train(Session& session, const TrainingOptions& o, const WorkerGather& gather) {
  const Dataset data = examples::MakeClusters(2048, 16, 4, /*seed=*/3);
  const SoftmaxRegression model(data.features, data.classes);
  const int workers = session.num_workers(), me = session.role_index();
  Model m = InitialModel(model, me);  // worker 0's values must win
  std::vector<float> gw(m.w.size()), gb(m.b.size());
  float counter = 0, counter_grad = static_cast<float>(std::pow(10.0, me));

  GradientSync sync(session);
  sync.Register("weights", m.w.data(), m.w.size());
  sync.Register("biases", m.b.data(), m.b.size());
  const bool tasks = o.tasks_per_worker > 0;
  // With tasks, one counter per task and clock (the plain counter's weights would vary).
  std::vector<float> counts(tasks ? o.iterations * workers * o.tasks_per_worker : 0);
  std::vector<float> counts_grad(counts.size());
  if (tasks) {
    sync.UseTasks(o.tasks_per_worker);
    sync.Register("task_counts", counts.data(), counts.size());
  } else {
    sync.Register("counter", &counter, 1);
  }
  double computed = 0;
  std::vector<double> starts(o.iterations), issues(o.iterations);
  const bool backup = SyncMode::Parse(session.config().sync).kind == SyncMode::Kind::kBackup;
  // Until the job's clock is done: a backup worker whose gradients were dropped skips clocks.
  for (int i = 0; sync.clock() < o.iterations; ++i) {
    sync.BeginIteration(o.batch);
    if (!backup) {
      ASSERT_EQ(sync.clock(), i);
    }
    i = static_cast<int>(sync.clock());
    starts[i] = Now();
    if (tasks) {
      ComputeTasks(sync, data, model, o, workers, me == o.slow_worker, m, gw, gb, counts_grad);
    } else {
      model.Loss(data, MinibatchRows(data.size(), workers, me, i, o.batch), m.w.data(), m.b.data(),
                 gw.data(), gb.data());
      if (me == o.slow_worker) std::this_thread::sleep_for(std::chrono::milliseconds(o.slow_ms));
    }
    issues[i] = Now();
    sync.PushPull("weights", gw.data(), m.w.data());
    sync.PushPull("biases", gb.data(), m.b.data(), /*priority=*/1);
    if (tasks) {
      sync.PushPull("task_counts", counts_grad.data(), counts.data());
    } else {
      sync.PushPull("counter", &counter_grad, &counter);
    }
    sync.EndIteration();
    computed += static_cast<double>(sync.last_iteration().tasks);
  }
  if (tasks) CheckTasks(session, sync, o, counts, gather({computed}));
  std::vector<size_t> all(data.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const double loss = model.Loss(data, all, m.w.data(), m.b.data());
  EXPECT_LT(loss, o.max_loss) << session.config().sync << " on worker " << me;

  if (o.check_reference) {
    Model ref = Reference(data, model, workers, o);
    EXPECT_LE(RelativeDistance(m.w, ref.w), 1e-6) << "worker " << me;
    EXPECT_LE(RelativeDistance(m.b, ref.b), 1e-6) << "worker " << me;
    if (!tasks) {
      EXPECT_EQ(counter, -o.lr * o.iterations *
                             static_cast<float>((std::pow(10.0, workers) - 1) / 9 / workers));
    }
  }
  if (o.staleness_bound >= 0) {
    std::vector<double> all_starts = gather(starts), all_issues = gather(issues);
    const int gap =
        CheckStaleness(all_starts, all_issues, workers, o.iterations, o.staleness_bound);
    if (o.slow_worker >= 0 && !tasks) {  // task transfer keeps the slow worker closer
      EXPECT_EQ(gap, o.staleness_bound);
    }
  }
  const SyncMode mode = SyncMode::Parse(session.config().sync);
  const bool on_arrival_sum =
      mode.kind == SyncMode::Kind::kAsp || mode.kind == SyncMode::Kind::kSsp;
  if (o.migrations > 0 && on_arrival_sum) {
    // Each gradient applied as it came, scaled by 1: the counter sums every push exactly once.
    session.Barrier(kWorkerGroup);
    sync.Fetch();
    EXPECT_EQ(counter, -o.lr * o.iterations * static_cast<float>((std::pow(10.0, workers) - 1) / 9))
        << "a gradient was lost or applied twice";
  }
  if (o.switch_to == "asp") {
    // Workers finish at different times in ASP: once all are done, fetch what every worker
    // pushed.
    session.Barrier(kWorkerGroup);
    sync.Fetch();
    // counter = -lr (T mean + (I - T) sum) for the switch clock T: T must come out whole.
    const double sum = (std::pow(10.0, workers) - 1) / 9, mean = sum / workers;
    const double t = (-counter / o.lr - o.iterations * sum) / (mean - sum);
    EXPECT_EQ(t, std::round(t)) << "counter " << counter << ": a gradient was lost or doubled";
    EXPECT_GE(t, 0);
    EXPECT_LT(t, o.iterations) << "the switch came after training";
  }
}

}  // namespace

namespace {

// Every key this server holds applied one gradient per worker and clock: none lost or applied
// twice, wherever the key moved.
void CheckAppliedCounts(Session& session, ParameterServer& server, const TrainingOptions& o,
                        const KeyOwners& owners) {
  const std::map<Key, ParameterServer::KeyStats> keys = server.Keys();
  std::vector<Key> held;
  const bool backup = SyncMode::Parse(session.config().sync).kind == SyncMode::Kind::kBackup;
  int64_t pushes = 0, applied = 0;
  for (const auto& [key, stats] : keys) {
    held.push_back(key);
    pushes += stats.pushes;
    applied += stats.applied;
    if (!backup) {
      EXPECT_EQ(stats.applied, int64_t{session.num_workers()} * o.iterations)
          << "key " << key << " on server " << session.role_index();
    }
  }
  if (o.relays > 0 && !keys.empty()) {
    EXPECT_LT(pushes, applied) << "no push to server " << session.role_index() << " was relayed";
  }
  if (owners) owners(session.role_index(), held);
}

// Moves the range of a random key of the model to another server, o.migrations times.
void MoveRanges(Session& session, const TrainingOptions& o) {
  MigrationControl control(session);
  std::mt19937 rng(7);
  int64_t epoch = 0;
  for (int i = 0; i < o.migrations; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.migrate_gap_ms));
    const int range = control.RangeOf(rng() % 8);
    const int from = control.OwnerOf(range);
    const int to =
        (from + 1 + static_cast<int>(rng() % (control.num_servers() - 1))) % control.num_servers();
    const MigrationControl::Move move = control.MoveRange(range, to);
    EXPECT_EQ(move.epoch, ++epoch);
    EXPECT_EQ(move.from, from);
    EXPECT_EQ(control.OwnerOf(range), to);
  }
}

// Relays on and off: a partner for one straggler, then for two, each ended, partners changing.
void OrderRelays(Session& session, const TrainingOptions& o) {
  RelayControl control(session);
  const std::vector<std::pair<int, int>> orders =
      session.num_workers() >= 3
          ? std::vector<std::pair<int, int>>{{0, 1}, {2, 1}, {0, -1}, {2, -1},
                                             {1, 0}, {2, 0}, {1, -1}, {2, -1}}
          : std::vector<std::pair<int, int>>{{0, 1}, {0, -1}, {1, 0}, {1, -1}};
  for (int i = 0; i < o.relays; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.relay_gap_ms * (i == 1 ? 4 : 1)));
    const auto [straggler, partner] = orders[i % orders.size()];
    try {
      control.Relay(straggler, partner);
    } catch (const Error& e) {
      if (std::string(e.what()).find("takes no RELAY_ORDER") == std::string::npos) throw;
      break;  // the workers are done
    }
  }
}

}  // namespace

void TrainSoftmax(Session& session, const TrainingOptions& options, const WorkerGather& gather,
                  const KeyOwners& owners) {
  if (session.is_server()) {
    ParameterServer server(session);
    session.Barrier(kAllNodes);  // until the workers are done
    CheckAppliedCounts(session, server, options, owners);
  } else if (session.is_worker()) {
    Train(session, options, gather);
    session.Barrier(kAllNodes);
  } else {
    if (!options.switch_to.empty()) {
      SyncControl control(session);
      std::this_thread::sleep_for(std::chrono::milliseconds(options.switch_after_ms));
      control.Switch(SyncMode::Parse(options.switch_to));
    }
    if (options.migrations > 0 && session.num_servers() > 1) MoveRanges(session, options);
    if (options.relays > 0) OrderRelays(session, options);
    session.Barrier(kAllNodes);
  }
}

}  // namespace testing
}  // namespace pacer
