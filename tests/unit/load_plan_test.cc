// SAS's placement and load plan: shares proportional to capacity, every range owned once, load
// flowing back when a server recovers.
#include "straggler/load_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace pacer {
namespace straggler {
namespace {

std::vector<KeyRangeLoad> Ranges(const std::vector<double>& loads, const std::vector<int>& owner) {
  std::vector<KeyRangeLoad> ranges;
  for (size_t i = 0; i < loads.size(); ++i) {
    ranges.push_back({static_cast<int>(i), loads[i], owner[i]});
  }
  return ranges;
}

// Applies moves, checking that each takes a range from its current owner.
std::vector<KeyRangeLoad> Apply(std::vector<KeyRangeLoad> ranges,
                                const std::vector<RangeMove>& moves) {
  for (const RangeMove& m : moves) {
    auto it = std::find_if(ranges.begin(), ranges.end(),
                           [&](const KeyRangeLoad& r) { return r.range == m.range; });
    EXPECT_NE(it, ranges.end());
    EXPECT_EQ(it->server, m.from) << "range " << m.range;
    EXPECT_NE(m.from, m.to);
    it->server = m.to;
  }
  return ranges;
}

TEST(LoadPlanTest, LargestFirstPlacementBalances) {
  const std::vector<double> loads = {8, 7, 6, 5, 4, 3, 2, 1};
  std::vector<int> owner = PlaceLargestFirst(loads, 3);
  std::vector<double> total(3, 0);
  for (size_t i = 0; i < loads.size(); ++i) total[owner[i]] += loads[i];
  EXPECT_EQ(total, (std::vector<double>{13, 12, 11}));
  EXPECT_THROW(PlaceLargestFirst(loads, 0), std::invalid_argument);
}

// S4: one of 4 servers at a third of the others' speed, 32 equal ranges spread evenly.
TEST(LoadPlanTest, AThirdSpeedServerKeepsAShareProportionalToItsCapacity) {
  const std::vector<double> loads(32, 1.0);
  std::vector<int> owner(32);
  for (int i = 0; i < 32; ++i) owner[i] = i % 4;
  const std::vector<double> capacity = {1.0 / 3, 1, 1, 1};
  std::vector<KeyRangeLoad> ranges = Ranges(loads, owner);
  const std::vector<RangeMove> moves = PlanLoad(ranges, capacity);
  std::vector<double> after = LoadAfter(ranges, moves, 4);
  // Ideal: 3.2 on the slow server, 9.6 on the others; ranges of 1 allow 3 and 10, 10, 9.
  EXPECT_EQ(after[0], 3);
  for (int s = 1; s < 4; ++s) {
    EXPECT_GE(after[s], 9);
    EXPECT_LE(after[s], 10);
  }
  double slowest = 0;
  for (int s = 0; s < 4; ++s) slowest = std::max(slowest, after[s] / capacity[s]);
  EXPECT_LE(slowest, 10.0);  // the iteration: 10, against 24 unmitigated and 9.6 ideal
  // Only the slow server gives; each range is owned once.
  for (const RangeMove& m : moves) EXPECT_EQ(m.from, 0);
  ranges = Apply(ranges, moves);
  std::set<int> seen;
  for (const KeyRangeLoad& r : ranges) EXPECT_TRUE(seen.insert(r.range).second);

  // The server recovers: load flows back until shares are even again.
  const std::vector<RangeMove> back = PlanLoad(ranges, {1, 1, 1, 1});
  std::vector<double> even = LoadAfter(ranges, back, 4);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(even[s], 8) << "server " << s;
  for (const RangeMove& m : back) EXPECT_EQ(m.to, 0);
}

TEST(LoadPlanTest, IdleServersTakeLoadAndBigRangesDoNotOvershoot) {
  // Everything on server 0; server 2 idle. One range is larger than any fair share.
  std::vector<KeyRangeLoad> ranges = Ranges({12, 2, 2, 2, 2, 2, 2}, {0, 0, 0, 0, 0, 0, 0});
  const std::vector<RangeMove> moves = PlanLoad(ranges, {1, 1, 1});
  std::vector<double> after = LoadAfter(ranges, moves, 3);
  // The 12 cannot be split: it stays or goes alone; the 2s fill the other two servers.
  EXPECT_EQ(*std::max_element(after.begin(), after.end()), 12);
  EXPECT_GT(after[2], 0);
  EXPECT_DOUBLE_EQ(after[0] + after[1] + after[2], 24);
}

TEST(LoadPlanTest, ServersWithoutCapacityOnlyGive) {
  std::vector<KeyRangeLoad> ranges = Ranges({1, 1, 1, 1}, {0, 0, 1, 1});
  std::vector<double> after = LoadAfter(ranges, PlanLoad(ranges, {0, 1}), 2);
  EXPECT_EQ(after, (std::vector<double>{0, 4}));
  EXPECT_THROW(PlanLoad(Ranges({1}, {5}), {1, 1}), std::invalid_argument);
  EXPECT_THROW(PlanLoad(ranges, {-1, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
