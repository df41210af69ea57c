// The scheduler's measurements for SAS: a server's time per byte is the median of its last
// reports with enough work, range loads are the bytes pushed to them; decisions wait for both.
#include "scheduler/sas_balancer.h"

#include <gtest/gtest.h>

#include <vector>

namespace pacer {
namespace {

constexpr int kServers = 4, kRanges = 16;

// A report of `seconds_per_mb` for 4 MB of work, pushed evenly to the ranges `owners` gives
// server `server`.
ServerReport Report(int server, double seconds_per_mb, const std::vector<int>& owners) {
  ServerReport r;
  r.bytes_in = 4 << 20;
  r.service_s = seconds_per_mb * 4;
  r.range_bytes.assign(kRanges, 0);
  for (int range = 0; range < kRanges; ++range) {
    if (owners[range] == server) r.range_bytes[range] = 1 << 20;
  }
  return r;
}

std::vector<int> BlockOwners() {
  std::vector<int> owners;
  for (int range = 0; range < kRanges; ++range) owners.push_back(range / (kRanges / kServers));
  return owners;
}

// Every server reports `rounds` times, server 0 at `slow` x the others' time per byte; then the
// balancer decides at a boundary.
straggler::SasDecision ReportAndDecide(SasBalancer& balancer, const std::vector<int>& owners,
                                       const std::vector<double>& slow_by_round) {
  for (double slow : slow_by_round) {
    for (int s = 0; s < kServers; ++s) {
      EXPECT_TRUE(balancer.Observe(s, Report(s, s == 0 ? slow * 1e-3 : 1e-3, owners)));
    }
  }
  return balancer.Decide(owners);
}

// Server 0 at a third of the others' speed, 4 ranges each: it keeps 1 (2.5x the ideal before).
void ExpectServer0ShedsThreeRanges(const straggler::SasDecision& decision) {
  EXPECT_NEAR(decision.imbalance, 2.5, 1e-6);
  ASSERT_EQ(decision.moves.size(), 3u);
  for (const straggler::RangeMove& m : decision.moves) EXPECT_EQ(m.from, 0);
}

// The boundaries before the first decision, every server at the same speed.
void WarmUp(SasBalancer& balancer, const std::vector<int>& owners) {
  for (int b = 1; b < SasBalancer::kWarmupBoundaries + SasBalancer::kMeasuredBoundaries; ++b) {
    EXPECT_TRUE(ReportAndDecide(balancer, owners, {1, 1, 1}).moves.empty()) << "boundary " << b;
  }
}

TEST(SasBalancerTest, WaitsForWholeIterationsAndThreeReportsPerServer) {
  SasBalancer balancer(kServers, kRanges);
  const std::vector<int> owners = BlockOwners();
  for (int b = 1; b < SasBalancer::kWarmupBoundaries + SasBalancer::kMeasuredBoundaries; ++b) {
    EXPECT_TRUE(ReportAndDecide(balancer, owners, {3, 3, 3}).moves.empty()) << "boundary " << b;
  }
  // Past the warm-up, server 0 at 3x sheds load: 3 of 4 ranges to the others.
  ExpectServer0ShedsThreeRanges(ReportAndDecide(balancer, owners, {3}));
}

TEST(SasBalancerTest, OneOddReportMovesNothingTwoInARowDo) {
  SasBalancer balancer(kServers, kRanges);
  const std::vector<int> owners = BlockOwners();
  WarmUp(balancer, owners);
  EXPECT_TRUE(ReportAndDecide(balancer, owners, {3}).moves.empty());
  EXPECT_TRUE(ReportAndDecide(balancer, owners, {1}).moves.empty());
  EXPECT_FALSE(ReportAndDecide(balancer, owners, {3, 3}).moves.empty());
}

TEST(SasBalancerTest, IdleReportsDoNotJudgeAServer) {
  SasBalancer balancer(kServers, kRanges);
  const std::vector<int> owners = BlockOwners();
  WarmUp(balancer, owners);
  // Slow, but with too little work to say so: a request's fixed cost, not the server.
  for (int i = 0; i < 3; ++i) {
    ServerReport idle = Report(0, 3e-3, owners);
    idle.bytes_in = SasBalancer::kMinWorkBytes - 1;
    idle.range_bytes.assign(kRanges, 0);
    EXPECT_TRUE(balancer.Observe(0, idle));
  }
  EXPECT_TRUE(balancer.Decide(owners).moves.empty());
}

// Server 0 serves requests as fast as the others but its link carries a third of their rate: the
// worse resource judges it. The others' link is faster than their service.
TEST(SasBalancerTest, AKnownBandwidthBelowTheServiceRateMakesAStraggler) {
  const double service_rate = (4 << 20) / 4e-3;  // as Report(s, 1e-3, ...) measures it
  SasBalancer balancer(kServers, kRanges,
                       {service_rate / 3, 2 * service_rate, 2 * service_rate, 2 * service_rate});
  const std::vector<int> owners = BlockOwners();
  WarmUp(balancer, owners);
  ExpectServer0ShedsThreeRanges(ReportAndDecide(balancer, owners, {1}));
}

TEST(SasBalancerTest, RefusesReportsOfAnotherTableOrServer) {
  SasBalancer balancer(kServers, kRanges);
  ServerReport r = Report(0, 1e-3, BlockOwners());
  r.range_bytes.resize(kRanges + 1);
  EXPECT_FALSE(balancer.Observe(0, r));
  EXPECT_FALSE(balancer.Observe(kServers, Report(0, 1e-3, BlockOwners())));
}

}  // namespace
}  // namespace pacer
