// The straggler detector on synthetic telemetry: persistent slowdowns are flagged by their second
// iteration and classified; noise and single slow iterations flag nobody.
#include "straggler/detector.h"

#include <gtest/gtest.h>

#include <random>

namespace pacer {
namespace straggler {
namespace {

// Workers with 10 ms compute and 1 ms transfer, each value times lognormal noise (10%).
class Telemetry {
 public:
  explicit Telemetry(uint64_t seed) : rng_(seed), noise_(0.0, 0.1) {}
  WorkerIteration Next(int worker, int64_t iteration, double compute_x = 1, double transfer_x = 1) {
    return {worker, iteration, 0.010 * compute_x * std::exp(noise_(rng_)),
            0.001 * transfer_x * std::exp(noise_(rng_))};
  }

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<double> noise_;
};

TEST(DetectorTest, FlagsAPersistentComputeStragglerByItsSecondIteration) {
  Detector detector;
  Telemetry telemetry(1);
  for (int64_t i = 0; i < 60; ++i) {
    const bool slow = i >= 30;
    for (int w = 0; w < 4; ++w) detector.Observe(telemetry.Next(w, i, w == 3 && slow ? 3 : 1));
    std::vector<Detection> found = detector.Detect();
    if (i < 31) {
      EXPECT_TRUE(found.empty()) << "iteration " << i;
    } else {
      ASSERT_EQ(found.size(), 1u) << "iteration " << i;
      EXPECT_EQ(found[0].index, 3);
      EXPECT_EQ(found[0].kind, Detection::Kind::kCompute);
      EXPECT_GT(found[0].ratio, 2.0);
    }
  }
}

TEST(DetectorTest, ASmallSlowPartDoesNotShareTheBlame) {
  Detector detector;
  for (int64_t i = 0; i < 3; ++i) {
    detector.Observe(WorkerIteration{0, i, 0.010, 0.0010});
    detector.Observe(WorkerIteration{1, i, 0.030, 0.0018});  // transfer 1.8x, but 0.8 ms of 20
  }
  std::vector<Detection> found = detector.Detect();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, Detection::Kind::kCompute);
}

TEST(DetectorTest, ClassifiesCommunicationAndBoth) {
  Detector detector;
  Telemetry telemetry(2);
  for (int64_t i = 0; i < 5; ++i) {
    detector.Observe(telemetry.Next(0, i));
    detector.Observe(telemetry.Next(1, i, 1, 20));  // a slow link: busy 10 + 20 ms
    detector.Observe(telemetry.Next(2, i, 3, 20));  // 30 ms compute, 20 ms transfer
  }
  std::vector<Detection> found = detector.Detect();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].index, 1);
  EXPECT_EQ(found[0].kind, Detection::Kind::kCommunication);
  EXPECT_EQ(found[1].index, 2);
  EXPECT_EQ(found[1].kind, Detection::Kind::kBoth);
}

// A relayed worker's transfer goes to its partner: it is neither judged nor the fastest (which
// would make every other worker look like a communication straggler), until it pushes itself
// again and is judged afresh.
TEST(DetectorTest, ARelayedWorkerIsNeitherJudgedNorTheFastest) {
  Detector detector;
  Telemetry telemetry(3);
  for (int64_t i = 0; i < 5; ++i) {
    for (int w = 0; w < 4; ++w) detector.Observe(telemetry.Next(w, i, 1, w == 0 ? 20 : 1));
  }
  std::vector<Detection> found = detector.Detect();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 0);
  EXPECT_EQ(found[0].kind, Detection::Kind::kCommunication);
  for (int64_t i = 5; i < 10; ++i) {
    WorkerIteration relayed = telemetry.Next(0, i, 1, 0.01);  // a fast link to its partner
    relayed.relayed = true;
    detector.Observe(relayed);
    for (int w = 1; w < 4; ++w) detector.Observe(telemetry.Next(w, i, 1, 1));
    EXPECT_TRUE(detector.Detect().empty()) << "iteration " << i;
  }
  for (int64_t i = 10; i < 12; ++i) {  // its own slow link again: flagged by its second iteration
    for (int w = 0; w < 4; ++w) detector.Observe(telemetry.Next(w, i, 1, w == 0 ? 20 : 1));
  }
  found = detector.Detect();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 0);
}

// A worker whose pushes all went as "same as last" (SMS's skip) moved nothing over its links: it
// stays judged by the transfers before, so a skip does not lift the flag that ordered it.
TEST(DetectorTest, AnIterationThatSkippedEveryPushKeepsTheLinksJudgement) {
  Detector detector;
  Telemetry telemetry(4);
  for (int64_t i = 0; i < 5; ++i) {
    for (int w = 0; w < 4; ++w) detector.Observe(telemetry.Next(w, i, 1, w == 0 ? 20 : 1));
  }
  for (int64_t i = 5; i < 15; ++i) {
    WorkerIteration skipped = telemetry.Next(0, i, 1, 0.1);  // tiny messages, no values
    skipped.skipped = true;
    detector.Observe(skipped);
    for (int w = 1; w < 4; ++w) detector.Observe(telemetry.Next(w, i, 1, 1));
    std::vector<Detection> found = detector.Detect();
    ASSERT_EQ(found.size(), 1u) << "iteration " << i;
    EXPECT_EQ(found[0].index, 0);
    EXPECT_EQ(found[0].kind, Detection::Kind::kCommunication);
  }
}

TEST(DetectorTest, NoiseAndLoneSlowIterationsFlagNobody) {
  Detector detector;
  Telemetry telemetry(3);
  std::mt19937_64 rng(4);
  int spikes = 0;
  std::vector<int64_t> last_spike(4, -10);
  for (int64_t i = 0; i < 200; ++i) {
    for (int w = 0; w < 4; ++w) {
      // A lone 3x iteration now and then (at most one in any three on one worker).
      const bool spike = rng() % 12 == 0 && i - last_spike[w] >= 3;
      if (spike) last_spike[w] = i;
      spikes += spike;
      detector.Observe(telemetry.Next(w, i, spike ? 3 : 1));
    }
    EXPECT_TRUE(detector.Detect().empty()) << "iteration " << i;
  }
  EXPECT_GT(spikes, 40);  // the test did inject them
}

// Sub-millisecond iterations: a worker at 3x the fastest's 0.3 ms is 0.6 ms past it, under the
// default floor of 3 ms; the same ratio on 10 ms iterations is flagged.
TEST(DetectorTest, ExcessUnderTheFloorFlagsNobody) {
  Detector tiny;
  Detector large;
  for (int64_t i = 0; i < 3; ++i) {
    tiny.Observe(WorkerIteration{0, i, 0.0002, 0.0001});
    tiny.Observe(WorkerIteration{1, i, 0.0008, 0.0001});
    large.Observe(WorkerIteration{0, i, 0.0020, 0.0010});
    large.Observe(WorkerIteration{1, i, 0.0080, 0.0010});
  }
  EXPECT_TRUE(tiny.Detect().empty());
  ASSERT_EQ(large.Detect().size(), 1u);
  EXPECT_EQ(large.Detect()[0].index, 1);
  DetectorOptions no_floor;
  no_floor.floor_s = 0;
  Detector unfloored(no_floor);
  for (int64_t i = 0; i < 3; ++i) {
    unfloored.Observe(WorkerIteration{0, i, 0.0002, 0.0001});
    unfloored.Observe(WorkerIteration{1, i, 0.0008, 0.0001});
  }
  EXPECT_EQ(unfloored.Detect().size(), 1u);
  // Predictions too: 1.5 ms against 1 ms is past the margin but not the floor.
  EXPECT_TRUE(tiny.DetectPredicted({{0, 0.001}, {1, 0.0015}}).empty());
  EXPECT_EQ(tiny.DetectPredicted({{0, 0.010}, {1, 0.015}}).size(), 1u);
}

// The first iteration of a job pays its warm-up: one slow value flags nobody, even as a node's
// only value.
TEST(DetectorTest, AFirstSlowIterationAloneFlagsNobody) {
  Detector detector;
  detector.Observe(WorkerIteration{0, 0, 0.010, 0.001});
  detector.Observe(WorkerIteration{1, 0, 0.010, 0.030});
  EXPECT_TRUE(detector.Detect().empty());
  detector.Observe(WorkerIteration{0, 1, 0.010, 0.001});
  detector.Observe(WorkerIteration{1, 1, 0.010, 0.001});
  EXPECT_TRUE(detector.Detect().empty());
}

TEST(DetectorTest, FlagsAServerPastTheMedianServiceTime) {
  Detector detector;
  for (int i = 0; i < 2; ++i) {
    for (int s = 0; s < 4; ++s) detector.Observe(ServerInterval{s, s == 2 ? 310.0 : 100.0 + s});
  }
  std::vector<Detection> found = detector.Detect();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, Detection::Kind::kServer);
  EXPECT_EQ(found[0].index, 2);
  // Of two servers, the slower is judged against their mean: 2.9x the faster is 1.49x the median.
  Detector pair;
  for (int i = 0; i < 2; ++i) {
    pair.Observe(ServerInterval{0, 100.0});
    pair.Observe(ServerInterval{1, 290.0});
  }
  EXPECT_TRUE(pair.Detect().empty());
  Detector mild;
  for (int i = 0; i < 2; ++i) {
    for (int s = 0; s < 4; ++s) mild.Observe(ServerInterval{s, s == 2 ? 140.0 : 100.0});
  }
  EXPECT_TRUE(mild.Detect().empty());
}

TEST(DetectorTest, PredictedStragglersArePastTheMarginOverTheFastestPrediction) {
  Detector detector;
  std::vector<Detection> found = detector.DetectPredicted({{0, 10.0}, {1, 11.9}, {2, 12.1}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 2);
  EXPECT_EQ(found[0].kind, Detection::Kind::kPredicted);
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
