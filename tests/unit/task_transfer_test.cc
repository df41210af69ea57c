// Falcon's task transfer with every rank a thread: the scheduler grants each task once while the
// workers race for them, and a slow worker's tasks go to the pioneers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "local_job.h"
#include "pacer/error.h"
#include "ps/session_core.h"
#include "worker/task_client.h"

namespace pacer {
namespace {

constexpr int kWorkers = 4;

// Worker 3 takes 20x longer per task than the others: the three pioneers race each other (and
// worker 3) for its tasks. Many tiny tasks make the races frequent.
TEST(TaskTransferTest, EveryTaskIsComputedOnceAndTheSlowWorkersTasksMove) {
  constexpr int kPerWorker = 40, kIterations = 3;
  std::vector<std::atomic<int>> computed(kIterations * kWorkers * kPerWorker);
  std::atomic<int> moved{0}, moved_off_others{0};
  RunLocalJob(1, kWorkers, Config(), [&](Session& session) {
    if (!session.is_worker()) {
      session.Barrier(kAllNodes);
      return;
    }
    TaskClient client(session.core());
    const int me = session.role_index();
    for (int it = 0; it < kIterations; ++it) {
      std::optional<int64_t> done;
      while (std::optional<TaskClient::Task> task = client.Next(it, kPerWorker, done)) {
        computed[it * kWorkers * kPerWorker + task->id]++;
        EXPECT_EQ(task->owner, task->id / kPerWorker);
        if (task->owner != me) {
          ++moved;
          if (task->owner != kWorkers - 1) ++moved_off_others;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(me == kWorkers - 1 ? 2000 : 100));
        done = task->id;
      }
      session.Barrier(kWorkerGroup);
    }
    session.Barrier(kAllNodes);
  });
  for (size_t i = 0; i < computed.size(); ++i) {
    ASSERT_EQ(computed[i], 1) << "task " << i % (kWorkers * kPerWorker) << " of iteration "
                              << i / (kWorkers * kPerWorker);
  }
  // Worker 3 alone would need 80 ms per iteration, the others 4 ms: most of its tasks move.
  EXPECT_GT(moved, kIterations * kPerWorker / 2);
  EXPECT_LT(moved_off_others, moved) << "the slow worker is the one relieved";
}

TEST(TaskTransferTest, BadReportsAreRefusedNamingThemAndTheIterationGoesOn) {
  constexpr int kPerWorker = 3;
  std::atomic<int> computed{0};
  RunLocalJob(1, kWorkers, Config(), [&](Session& session) {
    if (!session.is_worker()) {
      session.Barrier(kAllNodes);
      return;
    }
    TaskClient client(session.core());
    if (session.role_index() == 0) {
      try {
        client.Next(0, kPerWorker, /*done=*/5);
        ADD_FAILURE() << "a report of a task never granted was accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("scheduler rank 0 rejected TASK"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find(
                      ": worker 0 reported task 5 done, but nobody was granted it"),
                  std::string::npos)
            << e.what();
      }
      try {
        client.Next(0, kPerWorker + 1, std::nullopt);
        ADD_FAILURE() << "a second count of tasks per worker was accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("worker 0 counts 4 tasks per worker in iteration 0"),
                  std::string::npos)
            << e.what();
      }
    }
    session.Barrier(kWorkerGroup);  // the refused requests came first
    std::optional<int64_t> done;
    while (std::optional<TaskClient::Task> task = client.Next(0, kPerWorker, done)) {
      ++computed;
      done = task->id;
    }
    session.Barrier(kAllNodes);
  });
  EXPECT_EQ(computed, kWorkers * kPerWorker);
}

}  // namespace
}  // namespace pacer
