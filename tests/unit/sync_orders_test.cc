// STRN's profile under --sync=auto, on the scheduler of an in-process job fed reports by hand: a
// profile that cannot complete (a worker that never runs the full batch) is abandoned at its
// deadline, so the job stays under bsp and the other policies get the batch sizes back.
#include "scheduler/sync_orders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../common/in_process_job.h"
#include "scheduler/allowed_batches.h"
#include "scheduler/batch_owner.h"
#include "scheduler/metrics_log.h"
#include "scheduler/straggler_watch.h"
#include "session/node_of.h"

namespace pacer {
namespace {

// Whether `owner` lets STRET tune within `wait`.
bool ReleasedWithin(const BatchOwner& owner, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!owner.MayTune()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Worker 1 runs batches of 32 where worker 0 runs 64: no row of the profile is at the full
// batch. Warm-up ends at boundary 2; the deadline is 3 windows of 4 later, boundary 14.
TEST(SyncOrdersTest, AProfileThatCannotCompleteIsAbandonedAtItsDeadline) {
  Config config;
  config.sync = "auto";
  config.auto_window = 4;
  config.timeout_s = 30;
  const std::string path =
      ::testing::TempDir() + "/pacer-sync-orders-" + std::to_string(getpid()) + ".jsonl";
  bool held_before = false, released_at_deadline = false;
  testing::RunInProcessJob(1, 2, config, [&](Session& session) {
    if (session.is_scheduler()) {
      Node& node = NodeOf(session);
      MetricsLog metrics(path);
      StragglerWatch watch(node, metrics);
      AllowedBatches allowed(node);
      BatchOwner owner(true);
      SyncOrders orders(node, metrics, watch, allowed, owner);
      auto iterate = [&](int64_t i) {
        for (int w = 0; w < 2; ++w) {
          IterationReport r;
          r.iteration = i;
          r.batch_size = w == 0 ? 64 : 32;
          r.compute_s = 0.010;
          r.total_s = 0.012;
          orders.OnIteration(w, node.roles().WorkerRank(w), r);
        }
        orders.OnBoundary(i);
      };
      for (int64_t i = 0; i < 14; ++i) iterate(i);
      held_before = !ReleasedWithin(owner, std::chrono::milliseconds(200));
      iterate(14);
      released_at_deadline = ReleasedWithin(owner, std::chrono::seconds(10));
      orders.Stop();
    }
    session.Barrier(kAllNodes);
  });
  EXPECT_TRUE(held_before);
  EXPECT_TRUE(released_at_deadline);
  std::ifstream log(path);
  std::vector<std::string> strn;
  for (std::string line; std::getline(log, line);) {
    if (line.find("\"policy\":\"strn\"") != std::string::npos) strn.push_back(line);
  }
  std::remove(path.c_str());
  ASSERT_EQ(strn.size(), 1u);
  EXPECT_THAT(strn[0], ::testing::HasSubstr("\"iter\":14,"));
  EXPECT_THAT(strn[0], ::testing::HasSubstr("\"action\":\"abandoned\""));
  EXPECT_THAT(strn[0], ::testing::HasSubstr("the profile had 0 of 4 iterations with every worker "
                                            "at the full batch of 64 by iteration 14"));
}

}  // namespace
}  // namespace pacer
