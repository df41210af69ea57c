// STRET's relay and withholding on the sync engine: a push that carries several workers'
// gradients counts as each of them, and a withheld gradient resolves its clock without values.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "pacer/error.h"
#include "sync_engine_fixture.h"

namespace pacer {
namespace {

TEST(RelayedPushTest, BspCountsEveryWorkerARelayedPushCarries) {
  Engine e(3, "bsp");
  e.Init(7, {10, 20});
  bool served = false;
  e.Relay(7, 1, {0}, 0, {3 + 0, 6 + 0}, 2);  // worker 1 relays worker 0's {3, 6} with its {0, 0}
  EXPECT_FALSE(e.PullNow(7, 1, &served)) << "worker 2 has not pushed";
  e.Push(7, 2, 0, {6, 3});
  EXPECT_TRUE(served);
  EXPECT_EQ(e.Values(7), (std::vector<float>{7, 17}));  // w - (3 + 6 + 0) / 3, as without a relay
  const KeyStatus s = e->Status(7);
  EXPECT_EQ(s.complete, 1);
  EXPECT_EQ(s.applied, 3);
  EXPECT_EQ(s.pushes, 2);
}

// Relays turned on and off from one clock to the next (and partners changing) leave the same
// values as plain pushes, with every gradient counted once. Once-per-iteration modes keep
// momentum, which makes any lost or doubled gradient show in every later value; on-arrival modes
// apply a relayed sum as one step, which equals its parts' steps only where the step is linear
// (plain SGD).
TEST(RelayedPushTest, RelaysTurnedOnAndOffLoseAndDoubleNothing) {
  for (const std::string mode : {"bsp", "ssp:1", "epsp:0", "epsp:2", "asp"}) {
    const std::string optimizer =
        SyncMode::Parse(mode).on_arrival() ? "sgd:lr=0.5" : "sgd:lr=0.5,momentum=0.9";
    Engine relayed(4, mode, optimizer), plain(4, mode, optimizer);
    relayed.Init(1, {1, -1, 2});
    plain.Init(1, {1, -1, 2});
    std::mt19937 random(5);
    std::uniform_real_distribution<float> value(-1, 1);
    int64_t pushes = 0;
    for (int64_t clock = 0; clock < 12; ++clock) {
      std::vector<std::vector<float>> g(4, std::vector<float>(3));
      std::vector<double> weight = {1, 0.5, 0, 2.5};  // tasks: weights differ, one computed none
      for (auto& v : g) {
        for (float& x : v) x = value(random);
      }
      for (int w = 0; w < 4; ++w) {
        for (float& x : g[w]) x = static_cast<float>(x * weight[w]);
        plain.Push(1, w, clock, g[w], weight[w]);
      }
      // Clocks 0-3 plain, 4-7 worker 0 through worker 2, 8-11 workers 0 and 3 through worker 1.
      if (clock < 4) {
        for (int w = 0; w < 4; ++w) relayed.Push(1, w, clock, g[w], weight[w]);
        pushes += 4;
      } else if (clock < 8) {
        relayed.Push(1, 1, clock, g[1], weight[1]);
        relayed.Push(1, 3, clock, g[3], weight[3]);
        std::vector<float> sum(3);
        for (int i = 0; i < 3; ++i) sum[i] = g[2][i] + g[0][i];
        relayed.Relay(1, 2, {0}, clock, sum, weight[2] + weight[0]);
        pushes += 3;
      } else {
        relayed.Push(1, 2, clock, g[2], weight[2]);
        std::vector<float> sum(3);
        for (int i = 0; i < 3; ++i) sum[i] = g[1][i] + g[0][i] + g[3][i];
        relayed.Relay(1, 1, {0, 3}, clock, sum, weight[1] + weight[0] + weight[3]);
        pushes += 2;
      }
    }
    const std::vector<float> want = plain.Values(1), got = relayed.Values(1);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << mode << " value " << i;
    EXPECT_EQ(relayed->Status(1).applied, 48) << mode;
    EXPECT_EQ(relayed->Status(1).complete, 12) << mode;
    EXPECT_EQ(relayed->Status(1).pushes, pushes) << mode;
    EXPECT_EQ(plain->Status(1).pushes, 48) << mode;
  }
}

TEST(RelayedPushTest, AWithheldGradientResolvesItsClockWithoutValues) {
  Engine e(3, "bsp");
  e.Init(2, {0, 0});
  e->Push(2, {0, 0, 0, 0, Buffer()});  // withheld: no values, weight 0
  e.Push(2, 1, 0, {2, 4});
  e.Push(2, 2, 0, {4, 2});
  EXPECT_EQ(e.Values(2), (std::vector<float>{-3, -3}));  // the others' mean
  EXPECT_EQ(e->Status(2).applied, 3);
  // Every gradient withheld: the clock resolves and nothing moves.
  for (int w = 0; w < 3; ++w) e->Push(2, {w, 1, 0, 0, Buffer()});
  EXPECT_EQ(e->Status(2).complete, 2);
  EXPECT_EQ(e.Values(2), (std::vector<float>{-3, -3}));
  EXPECT_THROW(e->Push(2, {0, 2, 0, 1, Buffer()}), Error) << "no values, but weight 1";
}

// Where a clock's partial sum, with a relayed push in it, moves to another server (SAS), the
// counts move with it.
TEST(RelayedPushTest, APartialSumWithARelayedPushMovesWithItsCounts) {
  Engine from(3, "bsp"), to(3, "bsp");
  from.Init(4, {0});
  from.Relay(4, 2, {1}, 0, {6}, 2);
  from->Push(4, {2, 1, 0, 0, Buffer()});  // worker 2 withholds its next clock's
  std::vector<SyncEngine::KeyRecord> records = from->Export([](Key) { return true; });
  ASSERT_EQ(records.size(), 1u);
  to->Import(4, records[0].second);
  to.Push(4, 0, 0, {3});
  EXPECT_EQ(to.Values(4), (std::vector<float>{-3}));  // (6 + 3) / 3
  EXPECT_EQ(to->Status(4).applied, 3);
  EXPECT_EQ(to->Status(4).pushes, 3);
  EXPECT_THROW(to.Relay(4, 2, {1}, 0, {1}, 1), Error) << "clock 0 of workers 1 and 2 came";
}

TEST(RelayedPushTest, RefusesRelaysNoRuleAccepts) {
  Engine e(3, "bsp");
  e.Init(5, {0});
  auto refused = [&](int worker, std::vector<int> relayed, int64_t clock, const char* says) {
    try {
      e.Relay(5, worker, relayed, clock, {1}, 2);
      ADD_FAILURE() << "accepted a relay that " << says;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused(1, {1}, 0, "relayed a gradient of worker 1 (of 3)");  // itself
  refused(1, {3}, 0, "relayed a gradient of worker 3 (of 3)");  // no such worker
  refused(1, {-1}, 0, "relayed a gradient of worker -1");
  refused(1, {0, 0}, 0, "relayed a gradient of worker 0 (of 3)");  // twice
  e.Push(5, 0, 0, {1});
  refused(1, {0}, 0, "pushed clock 0 for worker 0 after clock 0");  // worker 0 came already
  EXPECT_EQ(e->Status(5).applied, 0) << "a refused relay changes nothing";
  EXPECT_EQ(e->Status(5).pushes, 1);
  e->Exclude(2);
  refused(1, {2}, 1, "worker 2, which the job excluded");
}

}  // namespace
}  // namespace pacer
