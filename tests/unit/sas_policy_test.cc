// SAS's decision: nothing to do on a balanced job or on noise; a server at a third of the speed
// sheds load until shares follow capacity; load flows back when it recovers.
#include "straggler/sas_policy.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace pacer {
namespace straggler {
namespace {

// 64 ranges of equal load, 16 per server (the table's first placement).
std::vector<KeyRangeLoad> FairShares() {
  std::vector<KeyRangeLoad> ranges;
  for (int i = 0; i < 64; ++i) ranges.push_back({i, 1.0, i / 16});
  return ranges;
}

std::vector<KeyRangeLoad> Apply(std::vector<KeyRangeLoad> ranges,
                                const std::vector<RangeMove>& moves) {
  for (const RangeMove& m : moves) {
    for (KeyRangeLoad& r : ranges) {
      if (r.range == m.range) {
        EXPECT_EQ(r.server, m.from);
        r.server = m.to;
      }
    }
  }
  return ranges;
}

TEST(SasPolicyTest, BalancedJobsAndNoiseMoveNothing) {
  const SasPolicy policy;
  EXPECT_TRUE(policy.Decide(FairShares(), {1e-9, 1e-9, 1e-9, 1e-9}).moves.empty());
  EXPECT_TRUE(policy.Decide(FairShares(), {1e-9, 1.05e-9, 0.95e-9, 1.02e-9}).moves.empty());
  // An unmeasured server counts as the median one.
  EXPECT_TRUE(policy.Decide(FairShares(), {1e-9, 0, 1e-9, 1e-9}).moves.empty());
}

TEST(SasPolicyTest, ASlowServerShedsLoadAndLoadFlowsBackWhenItRecovers) {
  const SasPolicy policy;
  const std::vector<double> slow = {3e-9, 1e-9, 1e-9, 1e-9};
  const std::vector<KeyRangeLoad> fair = FairShares();
  EXPECT_NEAR(SasPolicy::Imbalance(fair, SasPolicy::Capacities(slow)), 2.5, 1e-9);
  const SasDecision decision = policy.Decide(fair, slow);
  EXPECT_NEAR(decision.imbalance, 2.5, 1e-9);
  const std::vector<RangeMove>& shed = decision.moves;
  ASSERT_FALSE(shed.empty());
  for (const RangeMove& m : shed) EXPECT_EQ(m.from, 0) << "range " << m.range;
  const std::vector<KeyRangeLoad> planned = Apply(fair, shed);
  // Capacity-proportional: server 0 keeps about a tenth (6.4 of 64 ranges).
  EXPECT_EQ(LoadAfter(planned, {}, 4)[0], 6);
  EXPECT_LE(SasPolicy::Imbalance(planned, SasPolicy::Capacities(slow)), 1.1);
  EXPECT_DOUBLE_EQ(decision.planned, SasPolicy::Imbalance(planned, SasPolicy::Capacities(slow)));
  // Planned again under the same speeds: nothing left to gain.
  EXPECT_TRUE(policy.Decide(planned, slow).moves.empty());

  const std::vector<double> recovered = {1e-9, 1e-9, 1e-9, 1e-9};
  const std::vector<RangeMove> back = policy.Decide(planned, recovered).moves;
  ASSERT_FALSE(back.empty());
  for (const RangeMove& m : back) EXPECT_EQ(m.to, 0) << "range " << m.range;
  EXPECT_EQ(SasPolicy::Imbalance(Apply(planned, back), SasPolicy::Capacities(recovered)), 1.0);
}

TEST(SasPolicyTest, BadObservationsAreRefused) {
  const SasPolicy policy;
  EXPECT_THROW(policy.Decide(FairShares(), {1e-9, -1e-9, 1e-9, 1e-9}), std::invalid_argument);
  EXPECT_THROW(policy.Decide(FairShares(), {1e-9, 1e-9}), std::invalid_argument);
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
