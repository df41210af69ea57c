// STRN's groups rule (SyncMode::Kind::kGroups): synchronous within each group, each group's update
// its part of BSP's, exact; asynchronous across groups within the staleness bound; switching to
// and from it loses nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pacer/error.h"
#include "server/sync_engine.h"
#include "sync_engine_fixture.h"

namespace pacer {
namespace {

std::string ErrorOf(const std::string& spelled, int workers) {
  try {
    SyncMode::Parse(spelled).CheckFits(workers);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SyncGroupsTest, SpelledAsParsed) {
  const SyncMode m = SyncMode::Parse("groups:2:0+1+2/3");
  EXPECT_EQ(m.kind, SyncMode::Kind::kGroups);
  EXPECT_EQ(m.staleness, 2);
  EXPECT_EQ(m.groups, (std::vector<std::vector<int>>{{0, 1, 2}, {3}}));
  EXPECT_EQ(m.ToString(), "groups:2:0+1+2/3");
  EXPECT_EQ(SyncMode::Parse(m.ToString()), m);
  EXPECT_EQ(m.GroupOf(2), 0);
  EXPECT_EQ(m.GroupOf(3), 1);
  EXPECT_EQ(m.GroupOf(4), -1);
  EXPECT_NE(SyncMode::Parse("groups:2:0+1/2+3"), SyncMode::Parse("groups:2:0+2/1+3"));
  EXPECT_EQ(ErrorOf("groups:2:0+1+2/3", 4), "");
}

TEST(SyncGroupsTest, BadGroupsAreNamed) {
  EXPECT_NE(ErrorOf("groups", 4).find("as in groups:2:"), std::string::npos);
  EXPECT_NE(ErrorOf("groups:2", 4).find("as in groups:2:"), std::string::npos);
  EXPECT_NE(ErrorOf("groups:x:0/1", 2).find("'x' is not an integer"), std::string::npos);
  EXPECT_NE(ErrorOf("groups:1:", 2).find("no groups"), std::string::npos);
  EXPECT_NE(ErrorOf("groups:1:0+1/1", 2).find("worker 1 is in two groups"), std::string::npos);
  EXPECT_NE(ErrorOf("groups:1:0+a", 2).find("'a' is not an integer"), std::string::npos);
  EXPECT_EQ(ErrorOf("groups:1:0+1/3", 3),
            "groups:1:0+1/3: worker 3 is not among the job's 3 workers");
  EXPECT_EQ(ErrorOf("groups:1:0/2", 3), "groups:1:0/2: worker 1 of 3 is in no group");
  EXPECT_THROW(Engine(3, "groups:1:0/2"), Error);
}

// Group {0, 1} applies its part of BSP's update once both its gradients came, whatever group {2}
// does; a clock of both groups moves the parameters exactly as BSP's one update.
TEST(SyncGroupsTest, AGroupAppliesItsPartOfBspsUpdate) {
  Engine e(3, "groups:1:0+1/2");
  e.Init(1, {0, 0});
  e.Push(1, 0, 0, {2, 4});
  bool served = false;
  EXPECT_FALSE(e.PullNow(1, 1, &served, 0));  // its group's clock 0 waits for worker 1
  EXPECT_EQ(e.Values(1), (std::vector<float>{0, 0}));
  e.Push(1, 1, 0, {4, 8});
  EXPECT_TRUE(served);
  EXPECT_EQ(e.Values(1), (std::vector<float>{-2, -4}));  // - (2 + 4) / 3, - (4 + 8) / 3
  EXPECT_EQ(e->Status(1).version, 1);
  EXPECT_EQ(e->Status(1).complete, 0);  // group {2} has not finished clock 0
  // Worker 2 is a group of one: its part is applied on its own, as it comes.
  e.Push(1, 2, 0, {3, 3});
  EXPECT_EQ(e.Values(1), (std::vector<float>{-3, -5}));  // BSP: - (2 + 4 + 3) / 3, - 15 / 3
  EXPECT_EQ(e->Status(1).complete, 1);
  EXPECT_EQ(e->Status(1).applied, 3);
}

// Weighted pushes (tuned batches) count for their weight of the job's workers.
TEST(SyncGroupsTest, WeightedPushesCountOverTheJobsWorkers) {
  Engine e(4, "groups:0:0+1/2+3");
  e.Init(1, {0});
  e.Push(1, 0, 0, {6}, 3);  // 3 workers' worth of samples, their gradients summed
  e.Push(1, 1, 0, {2}, 1);
  EXPECT_EQ(e.Values(1), (std::vector<float>{-2}));  // - (6 + 2) / 4
}

// A group may run ahead of the slowest group by the bound, no further; within a group none runs
// ahead of another.
TEST(SyncGroupsTest, TheStalenessAcrossGroupsIsBounded) {
  for (int s : {0, 1, 3}) {
    const std::string mode = "groups:" + std::to_string(s) + ":0+1+2/3";
    EXPECT_EQ(MaxClockGap(mode, 4, 60, 21 + s), s) << mode;  // worker 3, alone, is slow
    EXPECT_EQ(MaxClockGap(mode, 4, 60, 21 + s, {0, 1, 2}), 0) << mode;
  }
  // Two groups of equals: within each, BSP; across, the slow worker's group lags by the bound.
  EXPECT_EQ(MaxClockGap("groups:2:0+1/2+3", 4, 60, 31), 2);
  EXPECT_EQ(MaxClockGap("groups:2:0+1/2+3", 4, 60, 31, {2, 3}), 0);
  EXPECT_EQ(MaxClockGap("groups:2:0+1/2+3", 4, 60, 31, {0, 1}), 0);
}

TEST(SyncGroupsTest, APullOfNoWorkersWaitsForEveryGroup) {
  Engine e(2, "groups:3:0/1");
  e.Init(1, {0});
  e.Push(1, 0, 0, {1});
  EXPECT_TRUE(e.PullNow(1, 1, nullptr, 0));
  EXPECT_FALSE(e.PullNow(1, 1));
  e.Push(1, 1, 0, {1});
  EXPECT_TRUE(e.PullNow(1, 1));
}

TEST(SyncGroupsTest, AGroupOfExcludedWorkersHoldsNoOneBack) {
  Engine e(3, "groups:0:0+1/2");
  e.Init(1, {0});
  e.Push(1, 0, 0, {1});
  e.Push(1, 1, 0, {1});
  bool served = false;
  EXPECT_FALSE(e.PullNow(1, 1, &served, 0));  // at bound 0, clock 1 waits for group {2}'s 0
  e->Exclude(2);
  EXPECT_TRUE(served);
  e.Push(1, 0, 1, {3});
  e.Push(1, 1, 1, {3});
  EXPECT_EQ(e->Status(1).complete, 2);
  // Clock 0 over the 3 workers, clock 1 over the 2 left: - 2 / 3 - 6 / 2.
  EXPECT_FLOAT_EQ(e.Values(1)[0], -2.0f / 3 - 3);
}

TEST(SyncGroupsTest, ARelayAcrossGroupsIsRefused) {
  Engine e(3, "groups:1:0+1/2");
  e.Init(1, {0});
  try {
    e.Relay(1, 0, {2}, 0, {2}, 2);
    FAIL() << "a relay across groups was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("worker 2, which is in another group of groups:1:0+1/2"),
              std::string::npos)
        << err.what();
  }
  e.Relay(1, 0, {1}, 0, {6}, 2);  // within the group: its clock resolves, - 6 / 3
  EXPECT_EQ(e.Values(1), (std::vector<float>{-2}));
}

// BSP until clock 2, groups from it, then BSP again from clock 4: every gradient applied once.
TEST(SyncGroupsTest, SwitchingToAndFromGroupsLosesNothing) {
  Engine e(2, "bsp");
  e.Init(1, {0});
  for (int w : {0, 1}) e.Push(1, w, 0, {1});  // -1
  e->PrepareSwitch();
  e->CommitSwitch(SyncMode::Parse("groups:5:0/1"), 2);
  e.Push(1, 0, 1, {1});
  e.Push(1, 0, 2, {4});  // held: clock 1 is BSP's and worker 1 has not pushed it
  EXPECT_EQ(e.Values(1), (std::vector<float>{-1}));
  e.Push(1, 1, 1, {3});  // clock 1 resolves (-2), the key switches, worker 0's clock 2 applies
  EXPECT_EQ(e->Status(1).mode, SyncMode::Parse("groups:5:0/1"));
  EXPECT_EQ(e.Values(1), (std::vector<float>{-5}));  // - 4 / 2
  e.Push(1, 0, 3, {2});                              // -6
  e->PrepareSwitch();  // worker 0 has pushed clock 3: BSP from clock 4
  e->CommitSwitch(SyncMode::Parse("bsp"), 4);
  e.Push(1, 0, 4, {10});  // held until group {1} resolves clock 3
  e.Push(1, 1, 2, {2});   // -7
  e.Push(1, 1, 3, {2});   // -8; the key switches to BSP
  EXPECT_EQ(e->Status(1).mode, SyncMode::Parse("bsp"));
  EXPECT_EQ(e.Values(1), (std::vector<float>{-8}));
  e.Push(1, 1, 4, {20});  // - (10 + 20) / 2
  EXPECT_EQ(e.Values(1), (std::vector<float>{-23}));
  const KeyStatus s = e->Status(1);
  EXPECT_EQ(s.applied, 10);
  EXPECT_EQ(s.complete, 5);
}

// A key moved to another server (SAS) in the middle of a group's clock goes on there.
TEST(SyncGroupsTest, AMovedKeyKeepsItsGroupsClocksAndSums) {
  Engine from(3, "groups:2:0+1/2");
  Engine to(3, "groups:2:0+1/2");
  from.Init(1, {0});
  for (int clock : {0, 1, 2}) from.Push(1, 2, clock, {3});  // group {2} has resolved clock 2
  from.Push(1, 0, 0, {4});                                  // group {0, 1}'s clock 0 half summed
  std::vector<SyncEngine::KeyRecord> moved = from->Export([](Key) { return true; });
  ASSERT_EQ(moved.size(), 1u);
  to->Import(moved[0].first, moved[0].second);
  EXPECT_FALSE(to.PullNow(1, 3, nullptr, 2));  // clock 3 would be 3 ahead of group {0, 1}
  to.Push(1, 1, 0, {2});
  EXPECT_EQ(to.Values(1), (std::vector<float>{-5}));  // - 3 x 3 / 3 - (4 + 2) / 3
  EXPECT_TRUE(to.PullNow(1, 3, nullptr, 2));
  EXPECT_EQ(to->Status(1).complete, 1);
}

}  // namespace
}  // namespace pacer
