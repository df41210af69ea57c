// STRN's chooser (straggler/sync_chooser.h) on constructed profiles, and the gradient noise scale
// it takes iterations to target from.
#include "straggler/sync_chooser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "straggler/noise_scale.h"

namespace pacer {
namespace straggler {
namespace {

TEST(NoiseScaleTest, RecoversTheSignalAndNoiseOfTwoBatchSizes) {
  // |G|^2 = 4 and tr(Sigma) = 100: E|g_B|^2 = 4 + 100 / B.
  EXPECT_DOUBLE_EQ(NoiseScale(10, 14, 100, 5), 25);
  EXPECT_DOUBLE_EQ(IterationsToTarget(25, 25), 2);
  EXPECT_TRUE(std::isinf(NoiseScale(10, 14, 100, 1)));  // no signal left at the big batch
  EXPECT_THROW(NoiseScale(100, 5, 10, 14), std::invalid_argument);
  EXPECT_THROW(NoiseScale(10, -1, 100, 5), std::invalid_argument);
  EXPECT_THROW(NoiseScale(10, NAN, 100, 5), std::invalid_argument);
}

SyncProfile Steady(std::vector<double> per_worker, int rows = 8) {
  SyncProfile p;
  p.batch = 32;
  p.noise_scale = 1000;
  p.iterations_left = 500;
  p.times.assign(static_cast<size_t>(rows), per_worker);
  return p;
}

const SyncPrediction& Row(const SyncChoice& c, const std::string& mode) {
  for (const SyncPrediction& p : c.table) {
    if (p.mode == mode) return p;
  }
  throw std::runtime_error("no row " + mode);
}

// Two workers, the second twice as slow; b = 10, B_noise = 20: each row by its formula.
TEST(SyncChooserTest, EachCandidatesPredictionFollowsItsModel) {
  SyncProfile p;
  p.batch = 10;
  p.noise_scale = 20;
  p.times = {{1, 2}, {1, 2}};
  SyncChooserOptions o;
  o.ssp_bounds = {1};
  const SyncChoice c = ChooseSync(p, o);
  ASSERT_EQ(c.table.size(), 4u);  // bsp, backup:1, ssp:1, consgd; two groups of one are consgd's
  EXPECT_EQ(c.table[0].mode, "bsp");
  EXPECT_DOUBLE_EQ(Row(c, "bsp").time_to_target, 2 * 2.0);       // I(20) = 2, rounds of 2 s
  EXPECT_DOUBLE_EQ(Row(c, "backup:1").time_to_target, 3 * 1.0);  // I(10) = 3, the fastest's 1 s
  // Blocks of 2 rows: the slow worker's 4 s for 2 rows, 2 updates a round: an update a second.
  EXPECT_DOUBLE_EQ(Row(c, "ssp:1").update_s, 1);
  EXPECT_DOUBLE_EQ(Row(c, "ssp:1").time_to_target, 3 * 1.05 * 1);
  // Rates 1 + 1/2; the slow worker's update misses 2 of the fast one's.
  EXPECT_DOUBLE_EQ(Row(c, "consgd").update_s, 1 / 1.5);
  EXPECT_DOUBLE_EQ(Row(c, "consgd").update_batch, 10);
  EXPECT_DOUBLE_EQ(Row(c, "consgd").staleness, 2);
  EXPECT_DOUBLE_EQ(Row(c, "consgd").time_to_target, 3 * 1.1 / 1.5);
  EXPECT_EQ(c.mode, "consgd");
}

TEST(SyncChooserTest, WithoutAStragglerItKeepsBsp) {
  const SyncChoice c = ChooseSync(Steady({0.1, 0.1, 0.1, 0.1}));
  EXPECT_EQ(c.mode, "bsp");
  EXPECT_DOUBLE_EQ(Row(c, "bsp").time_to_target, (1 + 1000.0 / 128) * 0.1);
}

TEST(SyncChooserTest, APersistentStragglerIsLeftBehindByABackupWorker) {
  const SyncChoice c = ChooseSync(Steady({0.1, 0.1, 0.1, 0.3}));
  EXPECT_EQ(c.mode, "backup:1");
  // Groups {0, 1, 2} and {3} come close: their update averages 80 samples.
  EXPECT_DOUBLE_EQ(Row(c, "groups:500:0+1+2/3").update_batch, 80);
}

TEST(SyncChooserTest, TwoSpeedClassesTrainAsTwoGroups) {
  const SyncChoice c = ChooseSync(Steady({0.3, 0.1, 0.3, 0.1}));
  EXPECT_EQ(c.mode, "groups:500:0+2/1+3");
  // Closer than the gap, the classes are one group: no groups row.
  SyncChooserOptions o;
  o.group_gap_s = 0.25;
  for (const SyncPrediction& row : ChooseSync(Steady({0.3, 0.1, 0.3, 0.1}), o).table) {
    EXPECT_EQ(row.mode.rfind("groups", 0), std::string::npos) << row.mode;
  }
}

TEST(SyncChooserTest, BadProfilesAreRefused) {
  SyncProfile p = Steady({0.1, 0.1});
  p.times[1] = {0.1};
  EXPECT_THROW(ChooseSync(p), std::invalid_argument);
  p = Steady({0.1, 0});
  EXPECT_THROW(ChooseSync(p), std::invalid_argument);
  p.times.clear();
  EXPECT_THROW(ChooseSync(p), std::invalid_argument);
  p = Steady({0.1});
  p.batch = 0;
  EXPECT_THROW(ChooseSync(p), std::invalid_argument);
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
