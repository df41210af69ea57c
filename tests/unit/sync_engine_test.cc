// The synchronization rules of STRAGGLERS.md section 2, on the engine alone (no processes).
#include "server/sync_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "../common/error_of.h"
#include "pacer/error.h"
#include "sync_engine_fixture.h"

namespace pacer {
namespace {

TEST(SyncEngineTest, TheLearningRateDropsForGradientsOfAStepsClock) {
  Engine bsp(2, "bsp", "sgd:lr=1,lr_steps=1,lr_factor=0.5");
  bsp.Init(1, {0});
  bsp.Push(1, 0, 0, {2});
  bsp.Push(1, 1, 0, {2});  // w = -2
  bsp.Push(1, 0, 1, {2});
  bsp.Push(1, 1, 1, {2});  // w = -2 - 0.5 x 2
  EXPECT_EQ(bsp.Values(1), (std::vector<float>{-3}));
  Engine asp(2, "asp", "sgd:lr=1,lr_steps=1,lr_factor=0.5");
  asp.Init(1, {0});
  asp.Push(1, 0, 0, {1});
  asp.Push(1, 1, 0, {1});  // w = -2
  asp.Push(1, 0, 1, {1});  // w = -2.5
  EXPECT_EQ(asp.Values(1), (std::vector<float>{-2.5f}));
}

TEST(SyncEngineTest, BspAppliesOneUpdateWhenEveryWorkerPushed) {
  Engine e(3, "bsp");
  e.Init(7, {10, 20});
  EXPECT_TRUE(e.PullNow(7, 0));
  e.Push(7, 0, 0, {3, 6});
  e.Push(7, 2, 0, {6, 3});
  bool served = false;
  EXPECT_FALSE(e.PullNow(7, 1, &served));
  EXPECT_EQ(e.Values(7), (std::vector<float>{10, 20}));
  EXPECT_EQ(e->Status(7).version, 0);
  e.Push(7, 1, 0, {0, 0});
  EXPECT_TRUE(served);
  EXPECT_EQ(e.Values(7), (std::vector<float>{7, 17}));  // w - (3 + 6 + 0) / 3
  EXPECT_EQ(e->Status(7).version, 1);
  EXPECT_EQ(e->Status(7).complete, 1);
  EXPECT_EQ(e->Status(7).applied, 3);
}

// A lost worker excluded (Cluster::SurviveLosses): the clock it held up resolves over the pushes
// that came, the mean of theirs.
TEST(SyncEngineTest, BspGoesOnWithoutAnExcludedWorker) {
  Engine e(3, "bsp");
  e.Init(7, {10, 20});
  e.Push(7, 0, 0, {3, 6});
  e.Push(7, 2, 0, {5, 2});
  bool served = false;
  EXPECT_FALSE(e.PullNow(7, 1, &served));
  e->Exclude(1);
  EXPECT_TRUE(served);
  EXPECT_EQ(e.Values(7), (std::vector<float>{6, 16}));  // w - (3 + 5) / 2
  EXPECT_EQ(e->Status(7).complete, 1);
  e.Push(7, 0, 1, {2, 2});
  EXPECT_FALSE(e.PullNow(7, 2));  // worker 2 still counts
  e.Push(7, 2, 1, {4, 0});
  EXPECT_TRUE(e.PullNow(7, 2));
  EXPECT_EQ(e.Values(7), (std::vector<float>{3, 15}));
  EXPECT_THROW(e.Push(7, 1, 0, {1, 1}), Error);  // it came back: refused
  EXPECT_THROW(e->Exclude(0), Error);            // the job's first values are worker 0's
}

// A push that came before its worker was lost stays in its clock's update.
TEST(SyncEngineTest, AnExcludedWorkersEarlierPushStaysInItsClock) {
  Engine e(3, "bsp");
  e.Init(7, {0});
  e.Push(7, 1, 0, {9});
  e->Exclude(1);
  e.Push(7, 0, 0, {3});
  EXPECT_EQ(e->Status(7).complete, 0);  // worker 2's push is still due
  e.Push(7, 2, 0, {0});
  EXPECT_EQ(e.Values(7), (std::vector<float>{-4}));  // (9 + 3 + 0) / 3
  EXPECT_EQ(e->Status(7).complete, 1);
}

TEST(SyncEngineTest, SspStopsWaitingForAnExcludedWorker) {
  Engine e(3, "ssp:1");
  e.Init(7, {0});
  for (int64_t c = 0; c < 3; ++c) {
    e.Push(7, 0, c, {1});
    e.Push(7, 2, c, {1});
  }
  bool served = false;
  EXPECT_FALSE(e.PullNow(7, 3, &served));  // worker 1 pushed nothing
  e->Exclude(1);
  EXPECT_TRUE(served);
  EXPECT_EQ(e->Status(7).complete, 3);
}

// A worker may write lent values (pushed from its shared memory) again once its push is
// answered, which is before the engine applies them: a gradient kept for later (the clock's first,
// or one held for a switch) is kept as a copy.
TEST(SyncEngineTest, LentGradientsKeptForLaterAreCopied) {
  Engine e(2, "bsp");
  e.Init(7, {10, 20});
  e.Init(8, {10, 20});
  std::vector<float> first = {3, 6}, held = {1, 2};
  e->Push(7, {0, 0, 0, 1, Buffer::Lent(first.data(), 8, nullptr)});
  first = {-1000, -1000};  // the worker's next iteration, after the push was answered
  e.Push(7, 1, 0, {1, 0});
  EXPECT_EQ(e.Values(7), (std::vector<float>{8, 17}));  // w - (3 + 6, 1 + 0) / 2

  e.Push(8, 0, 0, {0, 0});
  e.Push(8, 1, 0, {0, 0});
  EXPECT_EQ(e->PrepareSwitch(), 1);
  e->Push(8, {0, 1, 0, 1, Buffer::Lent(held.data(), 8, nullptr)});  // clock 1: held
  held = {-1000, -1000};
  e.Push(8, 1, 1, {1, 2});
  e->CommitSwitch(SyncMode::Parse("bsp"), 1);
  EXPECT_EQ(e.Values(8), (std::vector<float>{9, 18}));  // w - (1 + 1, 2 + 2) / 2
}

TEST(SyncEngineTest, WeightedPushesAreDividedByTheTotalWeight) {
  Engine e(3, "bsp");
  e.Init(1, {0});
  // Each push is weight x its mean gradient; the update is sum / total weight.
  e.Push(1, 0, 0, {1 * 1.f}, 1);
  e.Push(1, 1, 0, {2 * 4.f}, 2);
  e.Push(1, 2, 0, {5 * 2.f}, 5);
  EXPECT_EQ(e.Values(1), (std::vector<float>{-(1 + 8 + 10) / 8.f}));
}

TEST(SyncEngineTest, AspAppliesEachGradientOnArrival) {
  Engine e(2, "asp");
  e.Init(1, {0, 0});
  e.Push(1, 0, 0, {1, 2});
  EXPECT_EQ(e.Values(1), (std::vector<float>{-1, -2}));
  e.Push(1, 0, 1, {1, 1});
  e.Push(1, 0, 2, {1, 1});
  EXPECT_EQ(e.Values(1), (std::vector<float>{-3, -4}));
  EXPECT_TRUE(e.PullNow(1, 50));  // never waits
  EXPECT_EQ(e->Status(1).version, 3);
  EXPECT_EQ(e->Status(1).complete, 0);  // worker 1 has pushed nothing
}

TEST(SyncEngineTest, SspKeepsTheClockGapWithinTheBound) {
  for (int s : {0, 1, 2, 4}) {
    int gap = MaxClockGap("ssp:" + std::to_string(s), 4, 60, 11 + s);
    EXPECT_LE(gap, s) << "ssp:" << s;
    EXPECT_EQ(gap, s) << "ssp:" << s << ": a slow worker should push the gap to the bound";
  }
  // Without the bound the same schedule drifts far apart: the measure can fail.
  EXPECT_GT(MaxClockGap("asp", 4, 60, 11), 6);
}

TEST(SyncEngineTest, SspAndEpspKeepTheSameBound) {
  for (int s : {0, 2}) {
    const std::string epsp = "epsp:" + std::to_string(s);
    EXPECT_EQ(MaxClockGap(epsp, 4, 60, 11 + s), s) << epsp;
  }
}

// EPSP(0) is BSP over weighted pushes; a worker whose tasks all went to pioneers pushes weight 0.
TEST(SyncEngineTest, EpspZeroWaitsForEveryWorkerAndWeighsTheirTasks) {
  Engine e(3, "epsp:0");
  e.Init(1, {0});
  // Tasks per worker 4: worker 0 computed 1 (weight 0.25), worker 1 7, worker 2 none.
  e.Push(1, 0, 0, {0.25f * 8});
  e.Push(1, 1, 0, {1.75f * 2});
  bool served = false;
  EXPECT_FALSE(e.PullNow(1, 1, &served));
  e.Push(1, 2, 0, {0.f}, 0);
  EXPECT_TRUE(served);
  EXPECT_EQ(e.Values(1), (std::vector<float>{-(2 + 3.5f) / 2}));  // (8 + 7 x 2) / 8 tasks
  // A clock where every weight is 0 applies nothing, and resolves.
  for (int w = 0; w < 3; ++w) e.Push(1, w, 1, {5.f}, 0);
  EXPECT_EQ(e.Values(1), (std::vector<float>{-2.75f}));
  EXPECT_EQ(e->Status(1).complete, 2);
}

// EPSP(s > 0) applies each push on arrival as weight x gradient / workers: a clock's pushes add up
// to BSP's update.
TEST(SyncEngineTest, EpspSlackAppliesEachPushAsItsShareOfBspsUpdate) {
  Engine e(2, "epsp:1");
  e.Init(1, {0});
  e.Push(1, 0, 0, {1.5f * 2}, 1.5);  // 6 of 4 tasks per worker, gradient 2
  EXPECT_EQ(e.Values(1), (std::vector<float>{-1.5f}));
  EXPECT_TRUE(e.PullNow(1, 1));
  EXPECT_FALSE(e.PullNow(1, 2)) << "worker 1 has pushed nothing: clock 2 is beyond the bound";
  e.Push(1, 1, 0, {0.5f * 4}, 0.5);
  EXPECT_EQ(e.Values(1), (std::vector<float>{-2.5f}));  // (6 x 2 + 2 x 4) / 8
}

TEST(SyncEngineTest, BackupWorkersApplyTheFirstNAndDropTheRest) {
  Engine e(4, "backup:1");
  e.Init(5, {0});
  e.Push(5, 3, 0, {1});
  e.Push(5, 0, 0, {2});
  bool served = false;
  EXPECT_FALSE(e.PullNow(5, 1, &served));
  e.Push(5, 1, 0, {3});
  EXPECT_TRUE(served);
  EXPECT_EQ(e.Values(5), (std::vector<float>{-2}));  // (1 + 2 + 3) / 3
  e.Push(5, 2, 0, {100});                            // too late: dropped
  EXPECT_EQ(e.Values(5), (std::vector<float>{-2}));
  KeyStatus s = e->Status(5);
  EXPECT_EQ(s.applied, 3);
  EXPECT_EQ(s.dropped, 1);
  EXPECT_EQ(s.version, 1);
  // The late worker's pull for clock 1 is served at once, and it may skip to the servers' clock.
  EXPECT_TRUE(e.PullNow(5, 1));
  // A stale gradient (an older clock than the current iteration) is dropped too.
  e.Push(5, 0, 1, {1});
  e.Push(5, 1, 1, {1});
  e.Push(5, 3, 1, {1});
  e.Push(5, 2, 1, {1000});
  EXPECT_EQ(e.Values(5), (std::vector<float>{-3}));
  EXPECT_EQ(e->Status(5).dropped, 2);
}

TEST(SyncEngineTest, DynSgdScalesByOneOverStalenessPlusOne) {
  Engine e(2, "dynsgd");
  e.Init(2, {0});
  e.Push(2, 0, 0, {1}, 1, /*version=*/0);  // d = 0: -1
  e.Push(2, 1, 0, {1}, 1, /*version=*/0);  // d = 1: -1/2
  EXPECT_EQ(e.Values(2), (std::vector<float>{-1.5f}));
  e.Push(2, 0, 1, {3}, 1, /*version=*/0);  // d = 2: -3/3
  e.Push(2, 1, 1, {1}, 1, /*version=*/3);  // d = 0: -1
  EXPECT_EQ(e.Values(2), (std::vector<float>{-3.5f}));
}

TEST(SyncEngineTest, ConSgdScalesEveryUpdateByAConstant) {
  Engine e(4, "consgd");
  e.Init(2, {0});
  e.Push(2, 0, 0, {2});
  EXPECT_EQ(e.Values(2), (std::vector<float>{-0.5f}));  // default 1 / N
  Engine f(4, "consgd:0.125");
  f.Init(2, {0});
  f.Push(2, 3, 0, {8});
  EXPECT_EQ(f.Values(2), (std::vector<float>{-1}));
}

TEST(SyncEngineTest, OptimizerStateLivesPerKey) {
  Engine e(1, "bsp", "sgd:lr=1,momentum=0.5");
  e.Init(1, {0});
  e.Init(2, {0});
  e.Push(1, 0, 0, {1});  // m = 1, w = -1
  e.Push(1, 0, 1, {1});  // m = 1.5, w = -2.5
  e.Push(2, 0, 0, {1});  // another key's momentum starts at 0
  EXPECT_EQ(e.Values(1), (std::vector<float>{-2.5f}));
  EXPECT_EQ(e.Values(2), (std::vector<float>{-1}));
}

TEST(SyncEngineTest, ACheckpointResumesValuesMomentumAndClock) {
  const std::string sgd = "sgd:lr=1,momentum=0.5";
  Engine a(2, "bsp", sgd), b(2, "bsp", sgd);
  a.Init(1, {0, 10});
  for (int64_t clock = 0; clock < 2; ++clock) {
    a.Push(1, 0, clock, {1, 2});
    a.Push(1, 1, clock, {3, 2});  // mean {2, 2}: m = {2, 2}, then {3, 3}; w = {-5, 5}
  }
  b->Resume(1, a->Checkpoint(1));
  EXPECT_EQ(b.Values(1), (std::vector<float>{-5, 5}));
  EXPECT_EQ(b->Status(1).version, 2);
  EXPECT_EQ(b->Status(1).complete, 2);
  EXPECT_TRUE(b.PullNow(1, 2));
  EXPECT_THROW(b.Push(1, 0, 1, {1, 1}), Error);  // clock 1 is done
  for (Engine* e : {&a, &b}) {
    e->Push(1, 0, 2, {2, 0});
    e->Push(1, 1, 2, {2, 0});  // m = {1.5 + 2, 1.5}: w = {-8.5, 3.5} with the momentum kept
  }
  EXPECT_EQ(b.Values(1), (std::vector<float>{-8.5f, 3.5f}));
  EXPECT_EQ(b.Values(1), a.Values(1));
}

TEST(SyncEngineTest, ACheckpointNeedsEveryWorkerBetweenIterations) {
  Engine e(2, "bsp");
  e.Init(1, {0});
  e.Push(1, 0, 0, {1});
  try {
    e->Checkpoint(1);
    FAIL() << "a checkpoint with worker 0's clock 0 in a partial sum";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("key 1 in the middle of an iteration"),
              std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what()).find("worker 0 pushed clock 0"), std::string::npos);
  }
  EXPECT_THROW(e->Checkpoint(2), Error);  // no such key
}

TEST(SyncEngineTest, ResumeRejectsATruncatedRecordAndAKeyWithValues) {
  Engine a(1, "bsp"), b(1, "bsp");
  a.Init(1, {1, 2, 3});
  const Buffer record = a->Checkpoint(1);
  try {
    b->Resume(1, record.Slice(0, record.size() - 4));
    FAIL() << "a truncated record was resumed";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("checkpoint of key 1"), std::string::npos) << err.what();
  }
  EXPECT_EQ(b->Values(1), nullptr);
  EXPECT_THROW(a->Resume(1, record), Error);
}

TEST(SyncEngineTest, PullsWaitForInitialValues) {
  Engine e(2, "bsp");
  bool served = false;
  EXPECT_FALSE(e.PullNow(9, 0, &served));
  e.Init(9, {4});
  EXPECT_TRUE(served);
}

TEST(SyncEngineTest, RejectsWhatNoRuleAccepts) {
  Engine e(2, "bsp");
  EXPECT_NE(testing::ErrorOf([&] { e.Push(1, 0, 0, {1}); }).find("key 1 has no values"),
            std::string::npos);
  e.Init(1, {0, 0});
  EXPECT_NE(testing::ErrorOf([&] { e.Init(1, {1, 1}); }).find("already has"), std::string::npos);
  EXPECT_NE(testing::ErrorOf([&] { e.Push(1, 0, 0, {1}); }).find("pushed 4 bytes, the key holds 2"),
            std::string::npos);
  e.Push(1, 0, 0, {1, 1});
  EXPECT_NE(testing::ErrorOf([&] {
              e.Push(1, 0, 0, {1, 1});
            }).find("clocks must increase"),
            std::string::npos);
  EXPECT_NE(testing::ErrorOf([&] {
              e.Push(1, 1, 0, {1, 1}, 1, 5);
            }).find("only 0 updates"),
            std::string::npos);
  EXPECT_NE(testing::ErrorOf([&] {
              e.Push(1, 1, 0, {1, 1}, -1);
            }).find("weights must be finite and not negative"),
            std::string::npos);
  EXPECT_NE(testing::ErrorOf([&] {
              e.Push(1, 2, 0, {1, 1});
            }).find("worker 2 of 2"),
            std::string::npos);
  EXPECT_THROW(Engine(2, "backup:2"), Error);
  // Nothing was applied by the rejected pushes.
  e.Push(1, 1, 0, {3, 3});
  EXPECT_EQ(e.Values(1), (std::vector<float>{-2, -2}));
  EXPECT_EQ(e->Status(1).applied, 2);
}

}  // namespace
}  // namespace pacer
