// SMS's batch shrink as pure logic: a job of four workers where worker 0 follows S5's schedule
// (3x compute in the last 50 of every 200 iterations) is run through the policy, orders taking
// effect `lookahead` iterations after the boundary that decided them, as in a job.
#include "straggler/sms_policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "common/fault_spec.h"

namespace pacer {
namespace straggler {
namespace {

constexpr int kWorkers = 4;
constexpr int kFullBatch = 64;
constexpr double kComputeS = 0.016;  // a full batch's, when not slowed

std::vector<int> Sizes() {
  std::vector<int> sizes;
  for (int b = 8; b <= kFullBatch; b += 8) sizes.push_back(b);
  return sizes;
}

struct Trace {
  std::vector<std::vector<int>> batch;  // [worker][iteration]: the size it ran
  std::vector<SmsShrink> orders;
};

// `slow(worker, iteration)` is a worker's slowdown; noise is log-normal with sigma `noise`. A
// `fixed` fraction of a full batch's compute is paid whatever the batch.
template <typename Slow>
Trace Simulate(int iterations, Slow slow, double noise, uint64_t seed, double fixed = 0) {
  SmsOptions options;
  SmsPolicy policy(options);
  for (int w = 0; w < kWorkers; ++w) policy.Allow(w, Sizes());
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0.0, noise);
  Trace run;
  run.batch.assign(kWorkers, std::vector<int>(iterations, kFullBatch));
  std::map<int, std::vector<SmsShrink>> effective;  // by the first iteration they hold
  std::vector<int> current(kWorkers, kFullBatch);
  for (int i = 0; i < iterations; ++i) {
    for (const SmsShrink& s : effective[i]) current[s.worker] = s.batch;
    for (int w = 0; w < kWorkers; ++w) {
      run.batch[w][i] = current[w];
      const double share = fixed + (1 - fixed) * current[w] / kFullBatch;
      const double t = kComputeS * share * slow(w, i) * std::exp(jitter(rng));
      policy.Observe(w, t, current[w]);
    }
    for (const SmsShrink& s : policy.Decide()) {
      effective[i + options.lookahead].push_back(s);
      run.orders.push_back(s);
    }
  }
  return run;
}

TEST(SmsPolicyTest, ShrinksS5sStragglerFromTheFirstIterationOfEachPredictedPhase) {
  const FaultSpec s5 = FaultSpec::Parse("worker:0:compute=3x@period=200:50");
  const Trace run = Simulate(
      1200,
      [&](int w, int i) {
        return ActiveMultiplier({s5}, FaultSpec::Target::kWorker, FaultSpec::Effect::kCompute, w, i,
                                0, 0);
      },
      0.03, 7);
  // Once a period is seen (phases from 550 on), the order arrives before the phase does: its
  // first iteration already runs a third of the batch or less, and the worker is back at the
  // full batch from the first fast iteration after it.
  for (int start = 550; start < 1200; start += 200) {
    SCOPED_TRACE(start);
    EXPECT_LE(run.batch[0][start], kFullBatch / 3);
    EXPECT_GE(run.batch[0][start], 8);
    int shrunk = 0;
    for (int i = start; i < start + 50; ++i) shrunk += run.batch[0][i] <= kFullBatch / 3;
    EXPECT_GE(shrunk, 48);
    // Measured fast at start + 51 (the median of its last 3), ordered back then.
    if (start + 53 < 1200) {
      EXPECT_LT(run.batch[0][start + 52], kFullBatch);
      EXPECT_EQ(run.batch[0][start + 53], kFullBatch);
    }
    EXPECT_EQ(run.batch[0][start - 1], kFullBatch);
  }
  // The phase before a period is known (350) is met as soon as the level shows it.
  int shrunk_at_350 = 0;
  for (int i = 350; i < 400; ++i) shrunk_at_350 += run.batch[0][i] < kFullBatch;
  EXPECT_GE(shrunk_at_350, 40);
  for (int w = 1; w < kWorkers; ++w) {
    for (int i = 0; i < 1200; ++i) ASSERT_EQ(run.batch[w][i], kFullBatch) << w << " " << i;
  }
  ASSERT_FALSE(run.orders.empty());
  for (const SmsShrink& s : run.orders) {
    EXPECT_EQ(s.worker, 0);
    EXPECT_DOUBLE_EQ(s.weight, static_cast<double>(s.batch) / kFullBatch);
    if (s.batch < kFullBatch) {
      EXPECT_GT(s.predicted_s, 1.5 * s.median_s);
    }
  }
}

TEST(SmsPolicyTest, LeavesAJobWithoutStragglersAlone) {
  const Trace run = Simulate(
      1000, [](int, int) { return 1.0; }, 0.1, 8);
  EXPECT_TRUE(run.orders.empty());
}

TEST(SmsPolicyTest, AModelWithAFixedCostGoesBackToTheFullBatchAfterItsSlowPhase) {
  // Half of the compute does not shrink with the batch: scaled to the full batch, a shrunk
  // worker looks slow even once its phase is over. As fast again at its size as it was slow, it
  // goes back.
  const Trace run = Simulate(
      400, [](int w, int i) { return w == 0 && i >= 100 && i < 200 ? 3.0 : 1.0; }, 0.03, 11, 0.5);
  EXPECT_LT(run.batch[0][110], kFullBatch);
  for (int i = 210; i < 400; ++i) ASSERT_EQ(run.batch[0][i], kFullBatch) << i;
}

TEST(SmsPolicyTest, IgnoresLoneStalls) {
  // Worker 0 stalls 5x every 10th iteration (as a periodic evaluation would) and worker 1 on a
  // few iterations of its own: neither is a straggler to shrink.
  const Trace run = Simulate(
      800,
      [](int w, int i) {
        if (w == 0 && i % 10 == 0) return 5.0;
        if (w == 1 && i % 97 == 13) return 5.0;
        return 1.0;
      },
      0.03, 10);
  EXPECT_TRUE(run.orders.empty()) << run.orders.size() << " orders, the first for worker "
                                  << run.orders[0].worker;
}

TEST(SmsPolicyTest, ShrinksAConstantStragglerOnceAndKeepsItThere) {
  const Trace run = Simulate(
      400, [](int w, int) { return w == 2 ? 2.0 : 1.0; }, 0.03, 9);
  ASSERT_EQ(run.orders.size(), 1u);
  EXPECT_EQ(run.orders[0].worker, 2);
  EXPECT_EQ(run.orders[0].batch, 32);  // 64 x median / predicted = 64 / 2
  EXPECT_DOUBLE_EQ(run.orders[0].weight, 0.5);
}

// A lost worker is forgotten: a 2x straggler lost before the policy decided on it gets no order.
TEST(SmsPolicyTest, ALostWorkerGetsNoOrder) {
  SmsPolicy policy;
  for (int w = 0; w < kWorkers; ++w) policy.Allow(w, Sizes());
  for (int i = 0; i < 30; ++i) {
    for (int w = 0; w < kWorkers; ++w) {
      policy.Observe(w, w == 2 ? 2 * kComputeS : kComputeS, kFullBatch);
    }
  }
  policy.Forget(2);
  EXPECT_EQ(policy.BatchOf(2), 0);
  for (int i = 0; i < 50; ++i) {
    for (int w : {0, 1, 3}) policy.Observe(w, kComputeS, kFullBatch);
    EXPECT_TRUE(policy.Decide().empty()) << "iteration " << i;
  }
}

// The detector's communication stragglers skip at their full batch, from the boundary they are
// flagged at until the one they are cleared at: one order each way.
TEST(SmsPolicyTest, ASlowLinkedWorkerSkipsAtItsFullBatchWhileFlagged) {
  SmsPolicy policy;
  for (int w = 0; w < kWorkers; ++w) policy.Allow(w, Sizes());
  std::map<int, std::vector<SmsShrink>> orders;  // by iteration
  for (int i = 0; i < 50; ++i) {
    for (int w = 0; w < kWorkers; ++w) policy.Observe(w, kComputeS, kFullBatch);
    policy.SetSlowLinks(i >= 10 && i < 30 ? std::set<int>{1} : std::set<int>{});
    for (const SmsShrink& s : policy.Decide()) orders[i].push_back(s);
    EXPECT_EQ(policy.SkipsOf(1), i >= 10 && i < 30) << "iteration " << i;
    EXPECT_FALSE(policy.SkipsOf(0));
  }
  ASSERT_EQ(orders.size(), 2u);
  ASSERT_EQ(orders[10].size(), 1u);
  EXPECT_EQ(orders[10][0].worker, 1);
  EXPECT_EQ(orders[10][0].batch, kFullBatch);
  EXPECT_TRUE(orders[10][0].skip);
  EXPECT_TRUE(orders[10][0].slow_link);
  ASSERT_EQ(orders[30].size(), 1u);
  EXPECT_FALSE(orders[30][0].skip);
}

TEST(SmsPolicyTest, AShrunkWorkerAlsoSkips) {
  const Trace run = Simulate(
      400, [](int w, int) { return w == 2 ? 2.0 : 1.0; }, 0.03, 9);
  ASSERT_EQ(run.orders.size(), 1u);
  EXPECT_TRUE(run.orders[0].skip);
}

TEST(SmsPolicyTest, NeverShrinksAWorkerThatDidNotTellItsSizes) {
  SmsPolicy policy;
  policy.Allow(0, Sizes());
  policy.Allow(1, Sizes());
  for (int i = 0; i < 50; ++i) {
    policy.Observe(0, kComputeS, kFullBatch);
    policy.Observe(1, kComputeS, kFullBatch);
    policy.Observe(2, 10 * kComputeS, kFullBatch);  // slow, but it allows nothing
    EXPECT_TRUE(policy.Decide().empty());
  }
  EXPECT_EQ(policy.BatchOf(2), 0);
  EXPECT_EQ(policy.BatchOf(0), kFullBatch);
}

TEST(SmsPolicyTest, RejectsSizesThatCannotRun) {
  SmsPolicy policy;
  EXPECT_THROW(policy.Allow(3, {}), std::invalid_argument);
  try {
    policy.Allow(3, {16, 0});
    FAIL() << "a size of 0 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("worker 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch size 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
