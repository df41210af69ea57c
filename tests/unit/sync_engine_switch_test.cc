// Switching the synchronization rule in mid-run (SyncControl's engine side): clocks before the
// switch follow the old rule, clocks from it on the new one, and nothing is lost or doubled.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "pacer/error.h"
#include "server/sync_engine.h"
#include "sync_engine_fixture.h"

namespace pacer {
namespace {

// Switching: clocks before T follow the old rule, clocks from T on the new one.
TEST(SyncEngineTest, SwitchFromAspToBspLosesNothing) {
  Engine e(2, "asp");
  e.Init(1, {0});
  e.Push(1, 0, 0, {1});
  e.Push(1, 0, 1, {1});
  EXPECT_EQ(e->PrepareSwitch(), 2);
  EXPECT_THROW(e->CommitSwitch(SyncMode::Parse("bsp"), 1), Error);  // below the prepared clock
  e->CommitSwitch(SyncMode::Parse("bsp"), 2);
  e.Push(1, 0, 2, {10});  // held: worker 1 has not finished clock 1
  EXPECT_EQ(e->Status(1).held, 1u);
  bool served = false;
  EXPECT_FALSE(e.PullNow(1, 2, &served));  // clock 2 follows BSP, which has not started
  EXPECT_EQ(e.Values(1), (std::vector<float>{-2}));
  e.Push(1, 1, 0, {1});
  e.Push(1, 1, 1, {1});  // clock 1 resolved: the key switches, the held push joins clock 2
  EXPECT_TRUE(served);
  EXPECT_EQ(e->Status(1).mode, SyncMode::Parse("bsp"));
  EXPECT_EQ(e.Values(1), (std::vector<float>{-4}));  // four ASP updates, no BSP update yet
  e.Push(1, 1, 2, {20});
  EXPECT_EQ(e.Values(1), (std::vector<float>{-19}));  // - (10 + 20) / 2
  KeyStatus s = e->Status(1);
  EXPECT_EQ(s.applied, 6);
  EXPECT_EQ(s.dropped, 0);
  EXPECT_EQ(s.version, 5);
}

// Another server saw a later clock: the switch comes after the clock this engine prepared, and
// what it held meanwhile follows the old rule.
TEST(SyncEngineTest, PushesHeldByAPreparedSwitchFollowTheOldRuleBeforeItsClock) {
  Engine e(2, "bsp");
  e.Init(1, {0});
  e.Push(1, 0, 0, {2});
  EXPECT_EQ(e->PrepareSwitch(), 1);
  e.Push(1, 1, 0, {4});  // clock 0: not held
  e.Push(1, 0, 1, {6});  // held until the commit
  bool served = false;
  EXPECT_FALSE(e.PullNow(1, 2, &served));
  EXPECT_EQ(e->Status(1).held, 1u);
  e->CommitSwitch(SyncMode::Parse("asp"), 2);
  EXPECT_EQ(e->Status(1).held, 0u);  // clock 1 is BSP's: it waits for worker 1
  EXPECT_EQ(e.Values(1), (std::vector<float>{-3}));
  e.Push(1, 1, 1, {8});
  EXPECT_TRUE(served);
  EXPECT_EQ(e.Values(1), (std::vector<float>{-10}));
  e.Push(1, 1, 2, {1});  // ASP from clock 2
  EXPECT_EQ(e.Values(1), (std::vector<float>{-11}));
  EXPECT_EQ(e->Status(1).mode, SyncMode::Parse("asp"));
}

TEST(SyncEngineTest, ARejectedSwitchReleasesWhatItsPreparationHeld) {
  Engine e(2, "bsp");
  e.Init(1, {0});
  EXPECT_EQ(e->PrepareSwitch(), 0);
  e.Push(1, 0, 0, {2});
  e.Push(1, 1, 0, {4});
  EXPECT_EQ(e->Status(1).held, 2u);
  EXPECT_THROW(e->CommitSwitch(SyncMode::Parse("backup:2"), 0), Error);  // no worker left
  EXPECT_EQ(e->Status(1).held, 0u);
  EXPECT_EQ(e.Values(1), (std::vector<float>{-3}));  // BSP goes on
  EXPECT_EQ(e->Status(1).mode, SyncMode::Parse("bsp"));
}

TEST(SyncEngineTest, SwitchFromBspToBackupAndBack) {
  Engine e(3, "bsp");
  e.Init(1, {0});
  for (int w = 0; w < 3; ++w) e.Push(1, w, 0, {3});  // -3
  e->CommitSwitch(SyncMode::Parse("backup:1"), e->PrepareSwitch());
  e.Push(1, 0, 1, {1});
  e.Push(1, 1, 1, {3});   // -5
  e.Push(1, 2, 1, {50});  // dropped
  EXPECT_EQ(e.Values(1), (std::vector<float>{-5}));
  e->CommitSwitch(SyncMode::Parse("bsp"), e->PrepareSwitch());
  for (int w = 0; w < 3; ++w) e.Push(1, w, 2, {6});  // -11
  EXPECT_EQ(e.Values(1), (std::vector<float>{-11}));
  KeyStatus s = e->Status(1);
  EXPECT_EQ(s.applied, 8);
  EXPECT_EQ(s.dropped, 1);
  EXPECT_EQ(s.version, 3);
}

// Any interleaving of pushes across a switch applies every gradient exactly once: the final value
// equals the sum of what each rule should apply (ASP then SSP, both on arrival at lr 1).
TEST(SyncEngineTest, RandomInterleavingsAcrossASwitchApplyEachGradientOnce) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    Engine e(3, "asp");
    e.Init(1, {0});
    const int iterations = 12;
    std::vector<int> next(3, 0);
    int64_t first_new = -1;
    double expected = 0;
    int pushed = 0;
    while (pushed < 3 * iterations) {
      int w = static_cast<int>(rng() % 3);
      if (next[w] == iterations) continue;
      if (first_new < 0 && pushed == 10) first_new = e->PrepareSwitch();
      if (first_new >= 0 && pushed == 13) e->CommitSwitch(SyncMode::Parse("consgd:0.5"), first_new);
      const float g = static_cast<float>(1 + (rng() % 4));
      e.Push(1, w, next[w], {g});
      ++pushed;
      ++next[w];
      // ASP applies g, ConSGD(0.5) g / 2: which one depends on the clock alone.
      expected += next[w] - 1 < first_new || first_new < 0 ? g : g / 2;
    }
    EXPECT_EQ(e.Values(1)[0], static_cast<float>(-expected)) << "seed " << seed;
    EXPECT_EQ(e->Status(1).applied, 3 * iterations);
    EXPECT_EQ(e->Status(1).held, 0u);
  }
}

}  // namespace
}  // namespace pacer
