// The scheduler's intake of telemetry takes a report only from a rank of the role that sends it:
// a server's iteration report or a worker's service report is dropped, and the reports around it
// still count.
#include "scheduler/telemetry_intake.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "../common/in_process_job.h"
#include "ps/messages/telemetry.h"
#include "ps/node/node.h"
#include "session/node_of.h"

namespace pacer {
namespace {

// (index, rank, a field that tells the reports apart)
using Seen = std::tuple<int, int, int64_t>;

class Recorder : public TelemetryObserver {
 public:
  void OnIteration(int index, int rank, const IterationReport& report) override {
    std::lock_guard<std::mutex> lock(mu_);
    iterations_.emplace_back(index, rank, report.iteration);
  }
  void OnServerReport(int index, int rank, const ServerReport& report) override {
    std::lock_guard<std::mutex> lock(mu_);
    servers_.emplace_back(index, rank, report.requests);
  }
  void OnBoundary(int64_t iteration) override {
    std::lock_guard<std::mutex> lock(mu_);
    boundaries_.push_back(iteration);
  }
  void OnExclusion(int index) override {  // recorded among the boundaries, as -1 - index
    std::lock_guard<std::mutex> lock(mu_);
    boundaries_.push_back(-1 - index);
  }
  // Waits (20 s at most) until `iterations` and `servers` reports came.
  void WaitFor(size_t iterations, size_t servers) {
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (iterations_.size() >= iterations && servers_.size() >= servers) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::vector<Seen> iterations() {
    std::lock_guard<std::mutex> lock(mu_);
    return iterations_;
  }
  std::vector<Seen> servers() {
    std::lock_guard<std::mutex> lock(mu_);
    return servers_;
  }
  std::vector<int64_t> boundaries() {
    std::lock_guard<std::mutex> lock(mu_);
    return boundaries_;
  }

 private:
  std::mutex mu_;
  std::vector<Seen> iterations_, servers_;
  std::vector<int64_t> boundaries_;
};

IterationReport IterationNumbered(int64_t iteration) {
  IterationReport report;
  report.iteration = iteration;
  return report;
}

ServerReport RequestsCounted(int64_t requests) {
  ServerReport report;
  report.requests = requests;
  return report;
}

// Rank 0 the scheduler, rank 1 the server, ranks 2 and 3 workers 0 and 1. Each sender's wrong
// report goes before its right one, so once the right ones came the wrong ones were handled.
TEST(TelemetryIntakeTest, AReportFromARankOfTheWrongRoleIsDropped) {
  Recorder recorder;
  testing::RunInProcessJob(1, 2, Config(), [&](Session& session) {
    Node& node = NodeOf(session);
    if (session.is_scheduler()) {
      TelemetryIntake intake(node, {&recorder});  // in place of the scheduler's own
      session.Barrier(kAllNodes);                 // it takes reports
      session.Barrier(kAllNodes);                 // they were sent
      recorder.WaitFor(2, 1);
      session.Barrier(kAllNodes);
      return;
    }
    session.Barrier(kAllNodes);
    const int rank = session.rank();
    if (session.is_server()) {
      node.transport().Send(0, ReportMessage(IterationNumbered(40), rank), nullptr);
      node.transport().Send(0, ReportMessage(RequestsCounted(11), rank), nullptr);
    } else {
      node.transport().Send(0, ReportMessage(RequestsCounted(50 + rank), rank), nullptr);
      node.transport().Send(0, ReportMessage(IterationNumbered(rank), rank), nullptr);
    }
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
  });
  std::vector<Seen> iterations = recorder.iterations();
  std::sort(iterations.begin(), iterations.end());
  EXPECT_EQ(iterations, (std::vector<Seen>{{0, 2, 2}, {1, 3, 3}}));
  EXPECT_EQ(recorder.servers(), (std::vector<Seen>{{0, 1, 11}}));
  // Worker 0 reported iterations 0..2, worker 1 0..3: both have reported 0..2.
  EXPECT_EQ(recorder.boundaries(), std::vector<int64_t>{2});
}

// Worker 1 (rank 3) reports iterations 0 and 1, worker 0 (rank 2) 0..4; then the job goes on
// without worker 1: the observers hear of it, then of boundary 4 at once, and later boundaries
// follow worker 0 alone. A second exclusion of the same worker changes nothing.
TEST(TelemetryIntakeTest, BoundariesFollowTheWorkersLeftOnceOneIsExcluded) {
  Recorder recorder;
  testing::RunInProcessJob(1, 2, Config(), [&](Session& session) {
    Node& node = NodeOf(session);
    if (session.is_scheduler()) {
      TelemetryIntake intake(node, {&recorder});
      session.Barrier(kAllNodes);  // it takes reports
      session.Barrier(kAllNodes);  // they were sent
      recorder.WaitFor(7, 0);
      intake.Exclude(1);
      intake.Exclude(1);
      session.Barrier(kAllNodes);  // excluded
      session.Barrier(kAllNodes);  // worker 0 sent iteration 5
      recorder.WaitFor(8, 0);
      session.Barrier(kAllNodes);
      return;
    }
    session.Barrier(kAllNodes);
    const int rank = session.rank();
    auto report = [&](int64_t iteration) {
      node.transport().Send(0, ReportMessage(IterationNumbered(iteration), rank), nullptr);
    };
    if (session.is_worker()) {
      for (int64_t i = 0; i < (session.role_index() == 0 ? 5 : 2); ++i) report(i);
    }
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
    if (session.is_worker() && session.role_index() == 0) report(5);
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
  });
  EXPECT_EQ(recorder.iterations().size(), 8u);
  // Boundaries 0 and 1 with both workers; -2: worker 1 excluded; then 4 and 5.
  EXPECT_EQ(recorder.boundaries(), (std::vector<int64_t>{0, 1, -2, 4, 5}));
}

}  // namespace
}  // namespace pacer
