// STRET's orders from the scheduler (RelayControl) with every rank a thread: a probe measures the
// links a shaped transport caps, orders outside the job are refused with errors that name the
// worker, and a withheld worker leaves the updates while it still pulls.
#include "pacer/relay_control.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "../common/error_of.h"
#include "../common/in_process_job.h"
#include "pacer/error.h"
#include "pacer/gradient_sync.h"

namespace pacer {
namespace {

constexpr double kCappedBytesPerS = 4e6;
constexpr int64_t kProbeBytes = 256 << 10;

// Workers train a tiny model until the scheduler, done with its orders, names a last clock a few
// past every worker's (BSP keeps them within one of each other, so each sees it in time).
void TrainUntilReleased(Session& session, std::atomic<int64_t>& clock, std::atomic<int64_t>& last) {
  std::vector<float> w(256), grad(256, 0.f);
  GradientSync sync(session);
  sync.Register("w", w.data(), w.size());
  while (sync.clock() < last.load()) {
    sync.BeginIteration(1);
    sync.PushPull("w", grad.data(), w.data());
    sync.EndIteration();
    int64_t seen = clock.load();
    while (seen < sync.clock() && !clock.compare_exchange_weak(seen, sync.clock())) {
    }
  }
}

// The scheduler's orders: probes of worker 0's capped link and of a free one, then orders that
// name a worker outside the job, or the straggler as its own partner.
void CheckOrders(Session& session) {
  RelayControl control(session);
  const std::vector<double> bandwidth = control.Probe(0, kProbeBytes);
  ASSERT_EQ(bandwidth.size(), 3u);
  EXPECT_EQ(bandwidth[0], 0);  // itself
  // Round trip: 2 x 256 KiB over a capped way and a free one, so at most twice the cap (the
  // shaper lets no message through early), and far below the free link to worker 2.
  EXPECT_GT(bandwidth[1], 0);
  EXPECT_LE(bandwidth[1], 2 * kCappedBytesPerS * 1.02);
  EXPECT_GT(bandwidth[2], 5 * bandwidth[1]);
  // The other way round the cap is on the echo.
  const std::vector<double> from_one = control.Probe(1, kProbeBytes);
  EXPECT_LE(from_one[0], 2 * kCappedBytesPerS * 1.02);
  EXPECT_GT(from_one[2], 5 * from_one[0]);

  EXPECT_EQ(testing::ErrorOf([&] { control.Probe(3, kProbeBytes); }),
            "a probe of worker 3's links, but the job has 3 workers");
  EXPECT_EQ(testing::ErrorOf([&] { control.Probe(-1, kProbeBytes); }),
            "a probe of worker -1's links, but the job has 3 workers");
  EXPECT_NE(testing::ErrorOf([&] { control.Probe(2, 0); }).find("asked for probes of 0 bytes"),
            std::string::npos);
  EXPECT_NE(testing::ErrorOf([&] {
              control.Probe(2, int64_t{1} << 30);
            }).find("asked for probes of 1073741824 bytes: expected 1 to 16777216"),
            std::string::npos);
  EXPECT_EQ(testing::ErrorOf([&] { control.Relay(1, 1); }),
            "worker 1 ordered to relay through itself");
  EXPECT_EQ(testing::ErrorOf([&] { control.Relay(0, 3); }),
            "worker 0 ordered to relay through worker 3, but the job has 3 workers");
  EXPECT_EQ(testing::ErrorOf([&] { control.Relay(5, 1); }),
            "a relay order for worker 5, but the job has 3 workers");
}

TEST(RelayControlTest, ProbesMeasureCappedLinksAndOrdersOutsideTheJobAreRefused) {
  Config config;
  config.timeout_s = 60;
  // Worker 0's link to worker 1 is capped (one way: the echo comes back at full speed).
  config.inject = {"link:w0->w1:bw=4MB/s"};
  std::atomic<int64_t> clock{0}, last{INT64_MAX};
  testing::RunInProcessJob(1, 3, config, [&](Session& session) {
    if (session.is_server()) return testing::ServeUntilBarriers(session);
    if (session.is_worker()) {
      TrainUntilReleased(session, clock, last);
      session.Barrier(kAllNodes);
      return;
    }
    // Whatever the checks find, the workers stop a few clocks on.
    struct Release {
      std::atomic<int64_t>& clock;
      std::atomic<int64_t>& last;
      ~Release() { last = clock.load() + 5; }
    };
    {
      Release release{clock, last};
      CheckOrders(session);
    }
    session.Barrier(kAllNodes);
  });
}

// A worker of 64 parameters from 0 that pushes a constant gradient: 1 from worker 0, 3 from
// worker 1.
struct ConstantGradientWorker {
  explicit ConstantGradientWorker(Session& session)
      : w(64, 0.f), grad(64, session.role_index() == 0 ? 1.f : 3.f), sync(session) {
    sync.Register("w", w.data(), w.size());
  }
  void Train(int iterations) {
    for (int i = 0; i < iterations; ++i) {
      sync.BeginIteration(1);
      sync.PushPull("w", grad.data(), w.data());
      sync.EndIteration();
    }
  }

  std::vector<float> w, grad;
  GradientSync sync;
};

// Two workers push constant gradients (1 and 3) under BSP with SGD at rate 1: each iteration
// moves the parameters by their mean, 2, and by worker 0's alone, 1, while worker 1 withholds.
// Barriers put the orders between iterations 5 and 6, so the result is exact.
TEST(RelayControlTest, AWithheldWorkerLeavesTheUpdatesAndStillPulls) {
  Config config;
  config.timeout_s = 60;
  config.optimizer = "sgd:lr=1";
  testing::RunInProcessJob(1, 2, config, [&](Session& session) {
    if (session.is_server()) return testing::ServeUntilBarriers(session, 4);
    if (session.is_worker()) {
      ConstantGradientWorker worker(session);
      session.Barrier(kAllNodes);  // worker 1 withholds from here
      worker.Train(5);
      EXPECT_EQ(worker.w, std::vector<float>(64, -5.f)) << "worker " << session.role_index();
      EXPECT_EQ(worker.sync.last_iteration().bytes_out,
                session.role_index() == 1 ? 0 : static_cast<int64_t>(64 * sizeof(float)));
      session.Barrier(kAllNodes);
      session.Barrier(kAllNodes);  // and sends again from here
      worker.Train(5);
      EXPECT_EQ(worker.w, std::vector<float>(64, -15.f)) << "worker " << session.role_index();
      session.Barrier(kAllNodes);
      return;
    }
    RelayControl control(session);
    control.Withhold(1, true);
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
    control.Withhold(1, false);
    session.Barrier(kAllNodes);
    EXPECT_EQ(testing::ErrorOf([&] { control.Withhold(2, true); }),
              "a relay order for worker 2, but the job has 2 workers");
    session.Barrier(kAllNodes);
  });
}

// A fetch after a relayed iteration goes to the servers: worker 0's last iterations went through
// worker 1, which does not fetch. Fetching through the relay would wait for worker 1 until the
// deadline, and would leave the servers' answer to land in place after the fetch returned.
TEST(RelayControlTest, AFetchAfterARelayedIterationAsksTheServers) {
  Config config;
  config.timeout_s = 5;
  config.optimizer = "sgd:lr=1";
  testing::RunInProcessJob(1, 2, config, [&](Session& session) {
    if (session.is_server()) return testing::ServeUntilBarriers(session, 3);
    if (session.is_worker()) {
      ConstantGradientWorker worker(session);
      session.Barrier(kAllNodes);  // worker 0 relays through worker 1 from here
      worker.Train(3);
      session.Barrier(kAllNodes);
      if (session.role_index() == 0) {
        std::fill(worker.w.begin(), worker.w.end(), 0.f);
        EXPECT_EQ(testing::ErrorOf([&] { worker.sync.Fetch(); }), "(no error)");
        EXPECT_EQ(worker.w, std::vector<float>(64, -6.f));
      }
      session.Barrier(kAllNodes);
      return;
    }
    RelayControl control(session);
    control.Relay(0, 1);
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
  });
}

}  // namespace
}  // namespace pacer
