// SMS's skip on the pull side with every rank a thread: a worker ordered to skip keeps the
// parameters last sent to it while the servers' move less than --skip_pull_eps from them (the
// server answers "unchanged" with no values), and gets the servers' again once they move more,
// or once the order ends, when the server frees its copy.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <vector>

#include "../common/in_process_job.h"
#include "../common/skip_cache.h"
#include "pacer/gradient_sync.h"
#include "scheduler/relay_orders.h"
#include "session/node_of.h"

namespace pacer {
namespace {

constexpr size_t kCount = 16;
constexpr int kIterations = 12;
constexpr double kEps = 0.025;

// What each worker saw after each iteration: its parameters (one value: all are equal), the
// version it computes on next, and whether its pull was answered "unchanged".
struct Seen {
  std::vector<float> params;
  std::vector<int64_t> versions;
  std::vector<int64_t> unchanged;
};

// Both workers push the same constant gradient, so the parameters fall by 0.005 an iteration
// (lr 1) whatever either holds; worker 1 is ordered to skip, then, for one last iteration, not.
// `cached`: the bytes the server keeps while worker 1 skips, then after the order ended.
void Train(Seen seen[2], std::atomic<int64_t> cached[2]) {
  Config config;
  config.timeout_s = 60;
  config.optimizer = "sgd:lr=1";
  config.skip_pull_eps = kEps;
  testing::RunInProcessJob(1, 2, config, [&](Session& session) {
    if (session.is_server()) return testing::ServeCountingSkipCache(session, cached);
    if (session.is_worker()) {
      const int me = session.role_index();
      std::vector<float> w(kCount, 1.f), gradient(kCount, 0.005f);
      GradientSync sync(session);
      sync.Register("w", w.data(), w.size());
      sync.AllowBatchSizes({1});
      auto iterate = [&] {
        sync.BeginIteration(1);
        sync.PushPull("w", gradient.data(), w.data());
        sync.EndIteration();
        for (float x : w) EXPECT_EQ(x, w[0]);
        seen[me].params.push_back(w[0]);
        seen[me].versions.push_back(sync.last_iteration().version);
        seen[me].unchanged.push_back(sync.last_iteration().pulls_unchanged);
      };
      session.Barrier(kAllNodes);  // ordered
      for (int i = 0; i < kIterations; ++i) iterate();
      session.Barrier(kAllNodes);
      session.Barrier(kAllNodes);  // the skip is off from here
      iterate();
      session.Barrier(kAllNodes);
      return;
    }
    RelayOrders orders(NodeOf(session));
    orders.TuneBatches({{1, 1, 1.0, true}}, 1.0);
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
    orders.TuneBatches({{1, 1, 1.0, false}}, 1.0);
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
  });
}

TEST(ParameterSkipTest, ASkippingWorkerKeepsTheParametersLastSentWhileTheyMoveLittle) {
  Seen seen[2];
  std::atomic<int64_t> cached[2] = {0, 0};
  Train(seen, cached);
  ASSERT_EQ(seen[0].params.size(), static_cast<size_t>(kIterations + 1));
  ASSERT_EQ(seen[1].params.size(), seen[0].params.size());
  // Worker 0, not skipping, gets the servers' parameters every iteration.
  for (int i = 0; i <= kIterations; ++i) {
    EXPECT_FLOAT_EQ(seen[0].params[i], 1.f - 0.005f * static_cast<float>(i + 1)) << i;
    EXPECT_EQ(seen[0].versions[i], i + 1) << i;
    EXPECT_EQ(seen[0].unchanged[i], 0) << i;
  }
  // Worker 1 holds what was last sent to it while the servers' are within kEps of it: sent at
  // its first pull, then whenever they moved more (every 5th iteration at these values).
  float held = 0;
  int64_t held_version = 0, refreshed = 0;
  for (int i = 0; i < kIterations; ++i) {
    const float now = seen[0].params[i];
    const bool unchanged = i > 0 && std::fabs(now - held) <= kEps * std::fabs(held);
    if (!unchanged) {
      held = now;
      held_version = seen[0].versions[i];
      ++refreshed;
    }
    EXPECT_EQ(seen[1].params[i], held) << i;
    EXPECT_EQ(seen[1].versions[i], held_version) << i;
    EXPECT_EQ(seen[1].unchanged[i], unchanged ? 1 : 0) << i;
  }
  EXPECT_EQ(refreshed, 3);  // iterations 0, 5 and 10
  // Once the order ends, the servers' parameters, and the server keeps nothing.
  EXPECT_EQ(seen[1].params[kIterations], seen[0].params[kIterations]);
  EXPECT_EQ(seen[1].unchanged[kIterations], 0);
  // While skipping, the server kept the last gradient (constant: sent once, then "same as last")
  // and the parameters last sent.
  EXPECT_EQ(cached[0], static_cast<int64_t>(2 * kCount * sizeof(float)));
  EXPECT_EQ(cached[1], 0);
}

}  // namespace
}  // namespace pacer
