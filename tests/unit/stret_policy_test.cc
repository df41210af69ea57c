// STRET's pure logic: the relay matching is the maximum-weight one (not the greedy one), batch
// tuning matches iteration times and weights by samples, and each straggler escalates relay ->
// withhold -> batch tuning, with partners replaced and steps undone when a link recovers.
#include "straggler/stret_policy.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "straggler/batch_tuning.h"
#include "straggler/relay_matching.h"

namespace pacer {
namespace straggler {
namespace {

using Kind = StretDecision::Kind;

TEST(RelayMatchingTest, FindsTheMaximumWeightNotTheGreedyPairs) {
  // Greedy takes 0-2 (10), leaving 1-3 (1): 11. The matching takes 0-3 and 1-2: 17.
  const std::map<std::pair<int, int>, double> w = {
      {{0, 2}, 10}, {{0, 3}, 9}, {{1, 2}, 8}, {{1, 3}, 1}};
  const auto pairs = MatchRelays({0, 1}, {2, 3}, [&](int s, int p) { return w.at({s, p}); });
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].straggler, 0);
  EXPECT_EQ(pairs[0].partner, 3);
  EXPECT_EQ(pairs[1].straggler, 1);
  EXPECT_EQ(pairs[1].partner, 2);
  EXPECT_DOUBLE_EQ(pairs[0].weight + pairs[1].weight, 17);
}

TEST(RelayMatchingTest, APartnerTakesOneStragglerUnlessAllowedMore) {
  auto only_partner_5 = [](int, int p) { return p == 5 ? 3.0 : 0.0; };
  EXPECT_EQ(MatchRelays({0, 1}, {4, 5}, only_partner_5).size(), 1u);
  const auto two = MatchRelays({0, 1}, {4, 5}, only_partner_5, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].partner, 5);
  EXPECT_EQ(two[1].partner, 5);
}

TEST(RelayMatchingTest, WorthlessPairsStayUnmatchedAndBadListsAreRefused) {
  EXPECT_TRUE(MatchRelays({0}, {1, 2}, [](int, int) { return 0.0; }).empty());
  EXPECT_TRUE(MatchRelays({0, 1, 2}, {}, [](int, int) { return 1.0; }).empty());
  // More stragglers than partners: the best one gets the partner.
  const auto pairs = MatchRelays({0, 1, 2}, {3}, [](int s, int) { return 1.0 + s; });
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].straggler, 2);
  EXPECT_THROW(MatchRelays({0}, {0, 1}, [](int, int) { return 1.0; }), std::invalid_argument);
  EXPECT_THROW(MatchRelays(
                   {0}, {1}, [](int, int) { return 1.0; }, 0),
               std::invalid_argument);
}

TEST(BatchTuningTest, AThreeTimesSlowerWorkerGetsAThirdOfTheBatch) {
  // Compute linear in the batch; worker 2 three times slower; 2 ms of transfer each.
  std::vector<BatchProfile> profiles;
  for (int w = 0; w < 4; ++w) profiles.push_back({w, {{64, w == 2 ? 0.06 : 0.02}}, 0.002});
  const std::vector<int> allowed = {8, 16, 21, 24, 32, 48, 64};
  const auto tuned = TuneBatches(profiles, allowed, 64);
  ASSERT_EQ(tuned.size(), 4u);
  EXPECT_EQ(tuned[0].batch, 64);
  EXPECT_EQ(tuned[2].batch, 21);  // 0.002 + 0.06 x 21/64 = 0.0217 <= 0.022 x 1.05; 24 is 0.0245
  double sum = 0;
  for (const TunedBatch& t : tuned) sum += t.weight;
  EXPECT_NEAR(sum, 1, 1e-12);
  EXPECT_DOUBLE_EQ(tuned[2].weight, 21.0 / (3 * 64 + 21));
}

TEST(BatchTuningTest, MeasuredSizesAreUsedAsMeasuredAndBadInputIsRefused) {
  // Measured at 32: 0.01 s, not the 0.03 the proportion from 64 would say.
  const BatchProfile slow{1, {{32, 0.01}, {64, 0.06}}, 0};
  EXPECT_DOUBLE_EQ(slow.Seconds(32), 0.01);
  EXPECT_DOUBLE_EQ(slow.Seconds(16), 0.005);
  const auto tuned = TuneBatches({{0, {{64, 0.02}}, 0}, slow}, {16, 32, 64}, 64);
  EXPECT_EQ(tuned[1].batch, 32);
  EXPECT_THROW(TuneBatches({slow}, {16, 32}, 64), std::invalid_argument);
  EXPECT_THROW(TuneBatches({slow}, {}, 64), std::invalid_argument);
  EXPECT_THROW(TuneBatches({{0, {}, 0}}, {64}, 64), std::invalid_argument);
}

// Six workers on 100 MB/s links to the servers and 400 MB/s between them, save where a test
// changes it.
StretObservation Job(int64_t iteration) {
  StretObservation o;
  o.iteration = iteration;
  o.num_workers = 6;
  o.server_bandwidth.assign(6, 100e6);
  for (int a = 0; a < 6; ++a) {
    for (int b = a + 1; b < 6; ++b) o.peer_bandwidth[{a, b}] = 400e6;
  }
  return o;
}

std::vector<Kind> Kinds(const std::vector<StretDecision>& decisions) {
  std::vector<Kind> kinds;
  for (const StretDecision& d : decisions) kinds.push_back(d.kind);
  return kinds;
}

TEST(StretPolicyTest, ASlowServerLinkIsRelayedAtOnceWhenPeersAreMeasured) {
  StretPolicy policy;
  StretObservation o = Job(10);
  o.server_bandwidth[0] = 25e6;
  o.communication = {0};
  o.peer_bandwidth[{0, 3}] = 800e6;  // the fastest link to worker 0
  const auto decisions = policy.Decide(o);
  ASSERT_EQ(Kinds(decisions), std::vector<Kind>{Kind::kRelay});
  EXPECT_EQ(decisions[0].straggler, 0);
  EXPECT_EQ(decisions[0].partner, 3);
  EXPECT_EQ(policy.PartnerOf(0), 3);
  // Relaying, worker 0 is no longer flagged: nothing changes.
  o = Job(11);
  o.server_bandwidth[0] = 25e6;  // a probe's measure of its direct link
  EXPECT_TRUE(policy.Decide(o).empty());
  EXPECT_EQ(policy.PartnerOf(0), 3);
  // Its link recovers: the relay ends.
  const auto ended = policy.Decide(Job(12));
  ASSERT_EQ(Kinds(ended), std::vector<Kind>{Kind::kEndRelay});
  EXPECT_EQ(ended[0].partner, 3);
  EXPECT_EQ(policy.PartnerOf(0), -1);
}

TEST(StretPolicyTest, UnmeasuredPeersAreProbedFirst) {
  StretPolicy policy;
  StretObservation o = Job(5);
  o.peer_bandwidth.clear();
  o.server_bandwidth[1] = 25e6;
  o.communication = {1};
  EXPECT_EQ(Kinds(policy.Decide(o)), std::vector<Kind>{Kind::kProbe});
  o = Job(6);  // the probes answered
  o.server_bandwidth[1] = 25e6;
  o.communication = {1};
  const auto decisions = policy.Decide(o);
  ASSERT_EQ(Kinds(decisions), std::vector<Kind>{Kind::kRelay});
  EXPECT_EQ(decisions[0].straggler, 1);
}

TEST(StretPolicyTest, TwoStragglersGetPartnersOfTheirOwn) {
  StretPolicy policy;
  StretObservation o = Job(10);
  o.server_bandwidth[0] = o.server_bandwidth[1] = 25e6;
  o.communication = {0, 1};
  o.peer_bandwidth[{0, 2}] = o.peer_bandwidth[{1, 2}] = 900e6;  // both like worker 2 best
  const auto decisions = policy.Decide(o);
  ASSERT_EQ(Kinds(decisions), (std::vector<Kind>{Kind::kRelay, Kind::kRelay}));
  EXPECT_NE(decisions[0].partner, decisions[1].partner);
  EXPECT_TRUE(decisions[0].partner == 2 || decisions[1].partner == 2);
}

TEST(StretPolicyTest, APartnerThatStragglesIsReplaced) {
  StretPolicy policy;
  StretObservation o = Job(10);
  o.server_bandwidth[0] = 25e6;
  o.communication = {0};
  o.peer_bandwidth[{0, 3}] = 800e6;
  policy.Decide(o);
  ASSERT_EQ(policy.PartnerOf(0), 3);
  o = Job(11);
  o.server_bandwidth[0] = 25e6;
  o.compute = {3};  // the partner turns into a compute straggler
  o.peer_bandwidth[{0, 4}] = 700e6;
  const auto decisions = policy.Decide(o);
  ASSERT_EQ(Kinds(decisions), (std::vector<Kind>{Kind::kEndRelay, Kind::kRelay}));
  EXPECT_EQ(decisions[0].partner, 3);
  EXPECT_EQ(decisions[1].partner, 4);
  EXPECT_EQ(policy.PartnerOf(0), 4);
}

// A lost partner is replaced like one that straggles, and a lost worker is never a partner; a lost
// straggler is let go of without a decision (its partner's relay link drops it by itself).
TEST(StretPolicyTest, ALostWorkerIsNoPartnerAndNoStraggler) {
  StretPolicy policy;
  StretObservation o = Job(10);
  o.server_bandwidth[0] = o.server_bandwidth[1] = 25e6;
  o.communication = {0, 1};
  o.peer_bandwidth[{0, 3}] = 800e6;
  o.peer_bandwidth[{1, 4}] = 800e6;
  policy.Decide(o);
  ASSERT_EQ(policy.PartnerOf(0), 3);
  ASSERT_EQ(policy.PartnerOf(1), 4);
  o = Job(11);
  o.server_bandwidth[0] = o.server_bandwidth[1] = 25e6;
  o.excluded = {1, 3};
  o.peer_bandwidth[{0, 1}] = 900e6;  // the lost worker 1 would be worker 0's best partner
  const auto decisions = policy.Decide(o);
  ASSERT_EQ(Kinds(decisions), (std::vector<Kind>{Kind::kEndRelay, Kind::kRelay}));
  EXPECT_EQ(decisions[0].straggler, 0);
  EXPECT_EQ(decisions[0].partner, 3);
  EXPECT_EQ(decisions[0].reason, "its partner, worker 3, was lost");
  EXPECT_EQ(decisions[1].straggler, 0);
  EXPECT_NE(decisions[1].partner, 1);
  EXPECT_NE(decisions[1].partner, 3);
  EXPECT_EQ(policy.PartnerOf(1), -1);
}

TEST(StretPolicyTest, NoRelayWhereEveryLinkOfTheStragglerIsSlow) {
  StretPolicy policy;
  StretObservation o = Job(10);
  o.server_bandwidth[0] = 25e6;
  for (int p = 1; p < 6; ++p) o.peer_bandwidth[{0, p}] = 25e6;  // S3-all
  o.communication = {0};
  EXPECT_TRUE(policy.Decide(o).empty());
  EXPECT_EQ(policy.PartnerOf(0), -1);
  // At the progress check, slow progress withholds it...
  o.iteration = 100;
  o.progress = 0.002;
  const auto decisions = policy.Decide(o);
  ASSERT_EQ(Kinds(decisions), std::vector<Kind>{Kind::kWithhold});
  EXPECT_TRUE(policy.Withheld(0));
  // ...until its link recovers.
  StretObservation healed = Job(101);
  EXPECT_EQ(Kinds(policy.Decide(healed)), std::vector<Kind>{Kind::kEndWithhold});
  EXPECT_FALSE(policy.Withheld(0));
}

TEST(StretPolicyTest, FastProgressKeepsTheStragglerAndTunesBatchesOnce) {
  StretPolicy policy;
  StretObservation o = Job(10);
  o.server_bandwidth[0] = 25e6;
  for (int p = 1; p < 6; ++p) o.peer_bandwidth[{0, p}] = 25e6;
  o.communication = {0};
  policy.Decide(o);
  o.iteration = 50;
  o.progress = 0.5;  // not a check: 50 is not a multiple of withhold_every
  EXPECT_TRUE(policy.Decide(o).empty());
  o.iteration = 100;
  EXPECT_EQ(Kinds(policy.Decide(o)), std::vector<Kind>{Kind::kBatchTune});
  EXPECT_FALSE(policy.Withheld(0));
  o.iteration = 200;
  EXPECT_TRUE(policy.Decide(o).empty());
  EXPECT_TRUE(policy.BatchTuned());
}

TEST(StretPolicyTest, ARelayThatDoesNotClearTheStragglerEscalates) {
  StretOptions options;
  options.withhold_every = 20;
  StretPolicy policy(options);
  StretObservation o = Job(10);
  o.server_bandwidth[0] = 25e6;
  o.communication = {0};
  policy.Decide(o);
  ASSERT_EQ(policy.PartnerOf(0), 1);  // the lowest index among equals
  o.iteration = 12;
  EXPECT_TRUE(policy.Decide(o).empty());  // not settled yet
  o.iteration = 13;
  EXPECT_EQ(Kinds(policy.Decide(o)), std::vector<Kind>{Kind::kEndRelay});
  o.iteration = 20;
  o.progress = 0;
  EXPECT_EQ(Kinds(policy.Decide(o)), std::vector<Kind>{Kind::kWithhold});
}

TEST(StretPolicyTest, AComputeStragglerGoesStraightToBatchTuning) {
  StretPolicy policy;
  StretObservation o = Job(10);
  o.compute = {2};
  EXPECT_TRUE(policy.Decide(o).empty());
  o.iteration = 13;
  const auto decisions = policy.Decide(o);
  EXPECT_EQ(Kinds(decisions), std::vector<Kind>{Kind::kBatchTune});
  EXPECT_EQ(policy.PartnerOf(2), -1);
}

// Under --policy=auto, STRN's profile holds the batch sizes: the tuning waits until it ends, for
// a compute straggler and for a kept communication straggler alike.
TEST(StretPolicyTest, BatchTuningWaitsWhileAnotherPolicyHoldsTheSizes) {
  StretPolicy policy;
  StretObservation o = Job(10);
  o.compute = {2};
  o.batches_held = true;
  policy.Decide(o);
  o.iteration = 13;
  EXPECT_TRUE(policy.Decide(o).empty());
  o.iteration = 14;
  o.batches_held = false;
  EXPECT_EQ(Kinds(policy.Decide(o)), std::vector<Kind>{Kind::kBatchTune});

  StretPolicy kept;
  o = Job(10);
  o.server_bandwidth[0] = 25e6;
  for (int p = 1; p < 6; ++p) o.peer_bandwidth[{0, p}] = 25e6;
  o.communication = {0};
  o.batches_held = true;
  kept.Decide(o);
  o.iteration = 100;
  o.progress = 0.5;
  EXPECT_TRUE(kept.Decide(o).empty());
  o.iteration = 101;
  o.batches_held = false;
  EXPECT_EQ(Kinds(kept.Decide(o)), std::vector<Kind>{Kind::kBatchTune});
  EXPECT_FALSE(kept.Withheld(0));
}

TEST(StretPolicyTest, ObservationsOfWorkersOutsideTheJobAreRefused) {
  StretPolicy policy;
  StretObservation o = Job(1);
  o.communication = {6};
  EXPECT_THROW(policy.Decide(o), std::invalid_argument);
  o = Job(1);
  o.peer_bandwidth[{2, 9}] = 1e6;
  EXPECT_THROW(policy.Decide(o), std::invalid_argument);
  o = Job(1);
  o.server_bandwidth.pop_back();
  EXPECT_THROW(policy.Decide(o), std::invalid_argument);
  StretOptions bad;
  bad.relays_per_partner = 0;
  EXPECT_THROW(StretPolicy{bad}, std::invalid_argument);
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
