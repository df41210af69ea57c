// Falcon's task ledger: one authority grants each task once. Owners take their tasks from the
// front, pioneers take stragglers' from the back; no task is computed twice or lost, even when
// many callers race for the last ones.
#include "straggler/task_ledger.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../common/error_of.h"

namespace pacer {
namespace straggler {
namespace {

TEST(TaskLedgerTest, OwnersTakeFromTheFrontPioneersFromTheBack) {
  TaskLedger ledger = TaskLedger::InShares({4, 4});
  EXPECT_EQ(ledger.Next(1)->task, 4);
  const TaskLedger::Grant taken = *ledger.Transfer(/*pioneer=*/0, /*victim=*/1);
  EXPECT_EQ(taken.task, 7);  // the one worker 1 would reach last
  EXPECT_EQ(taken.owner, 1);
  EXPECT_EQ(taken.computed_by, 0);
  EXPECT_EQ(ledger.Unstarted(1), 2);
  EXPECT_EQ(ledger.Transfer(0, 1)->task, 6);
  EXPECT_EQ(ledger.Next(1)->task, 5);
  EXPECT_FALSE(ledger.Next(1).has_value()) << "its last tasks went to the pioneer";
  EXPECT_FALSE(ledger.Transfer(0, 1).has_value());
  EXPECT_EQ(ledger.Running(0), 2) << "the two it took";
  EXPECT_EQ(ledger.Running(1), 2);
  for (auto [worker, task] : {std::pair{1, 4}, {0, 7}, {0, 6}, {1, 5}}) ledger.Done(worker, task);
  EXPECT_EQ(ledger.done(), 4);
  EXPECT_EQ(ledger.Running(0), 0);
  EXPECT_EQ(ledger.Running(1), 0);
  EXPECT_FALSE(ledger.Complete()) << "worker 0's own tasks are not done";
  while (auto g = ledger.Next(0)) ledger.Done(0, g->task);
  EXPECT_TRUE(ledger.Complete());
}

TEST(TaskLedgerTest, BadListsAndReportsAreRefusedNamingThem) {
  EXPECT_EQ(testing::ErrorOf<std::invalid_argument>([] {
              TaskLedger({{0, 1}, {1}});
            }),
            "task 1 is listed for workers 0 and 1");
  EXPECT_EQ(testing::ErrorOf<std::invalid_argument>([] {
              TaskLedger({{0, 5}});
            }),
            "task 5 of worker 0 is outside 0..1");
  TaskLedger ledger = TaskLedger::InShares({2, 2});
  const int64_t mine = ledger.Next(0)->task;
  EXPECT_EQ(testing::ErrorOf<std::invalid_argument>([&] { ledger.Done(1, mine); }),
            "worker 1 reported task 0 done, but worker 0 was granted it");
  EXPECT_EQ(testing::ErrorOf<std::invalid_argument>([&] { ledger.Done(1, 3); }),
            "worker 1 reported task 3 done, but nobody was granted it");
  EXPECT_EQ(testing::ErrorOf<std::invalid_argument>([&] { ledger.Done(0, 9); }),
            "task 9 does not exist: the ledger has 4 tasks");
  ledger.Done(0, mine);
  EXPECT_EQ(testing::ErrorOf<std::invalid_argument>([&] { ledger.Done(0, mine); }),
            "worker 0 reported task 0 done twice");
  EXPECT_EQ(testing::ErrorOf<std::invalid_argument>([&] { ledger.Transfer(0, 2); }),
            "victim 2 does not exist: the ledger has workers 0..1");
  EXPECT_EQ(ledger.done(), 1) << "refused reports count nothing";
}

// Eight threads race for 4000 tiny tasks of 4 owners through one authority (a mutex around the
// ledger, as the scheduler serializes requests): owners drain their lists while pioneers steal
// from every other owner. Each task is computed exactly once.
TEST(TaskLedgerTest, RacingOwnersAndPioneersComputeEachTaskOnce) {
  constexpr int kWorkers = 4, kPer = 1000;
  TaskLedger ledger = TaskLedger::InShares(std::vector<int64_t>(kWorkers, kPer));
  std::mutex authority;
  std::vector<std::atomic<int>> computed(kWorkers * kPer);
  std::vector<std::thread> threads;
  std::atomic<int> transferred{0};
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {  // the owner
      for (;;) {
        std::optional<TaskLedger::Grant> g;
        {
          std::lock_guard<std::mutex> lock(authority);
          g = ledger.Next(w);
        }
        if (!g) return;
        computed[g->task]++;
        std::lock_guard<std::mutex> lock(authority);
        ledger.Done(w, g->task);
      }
    });
    threads.emplace_back([&, w] {  // a pioneer on the same worker, stealing round the others
      for (int victim = (w + 1) % kWorkers;; victim = (victim + 1) % kWorkers) {
        std::optional<TaskLedger::Grant> g;
        bool any_left = false;
        {
          std::lock_guard<std::mutex> lock(authority);
          g = ledger.Transfer(w, victim);
          for (int v = 0; v < kWorkers; ++v) any_left |= ledger.Unstarted(v) > 0;
        }
        if (g) {
          EXPECT_EQ(g->owner, victim);
          computed[g->task]++;
          transferred++;
          std::lock_guard<std::mutex> lock(authority);
          ledger.Done(w, g->task);
        } else if (!any_left) {
          return;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(ledger.Complete());
  for (int id = 0; id < kWorkers * kPer; ++id) ASSERT_EQ(computed[id], 1) << "task " << id;
  EXPECT_GT(transferred, 0) << "the race never transferred a task";
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
