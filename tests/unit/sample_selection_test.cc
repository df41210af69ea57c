#include "pacer/sample_selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "../common/error_of.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// `clusters` tight groups of `per_cluster` samples around orthogonal directions of `dim`
// features, with random losses; cluster_of[i] is sample i's group.
struct Clustered {
  std::vector<float> features;
  std::vector<float> losses;
  std::vector<int> cluster_of;
};

Clustered MakeClusters(int clusters, int per_cluster, int dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(-0.05f, 0.05f), loss(0.1f, 3.0f);
  Clustered c;
  for (int i = 0; i < clusters * per_cluster; ++i) {  // interleaved: the order says nothing
    const int group = i % clusters;
    for (int d = 0; d < dim; ++d) c.features.push_back((d == group ? 1.0f : 0.0f) + noise(rng));
    c.losses.push_back(loss(rng));
    c.cluster_of.push_back(group);
  }
  return c;
}

TEST(SampleSelectionTest, KeepsTheHighestLossSampleOfEachCluster) {
  const int clusters = 5, per_cluster = 7;
  const Clustered c = MakeClusters(clusters, per_cluster, 8, 3);
  const SelectedSamples kept = SelectSamples(c.features, 8, c.losses, clusters);
  std::vector<int> expected;
  for (int group = 0; group < clusters; ++group) {
    int best = -1;
    for (int i = 0; i < clusters * per_cluster; ++i) {
      if (c.cluster_of[i] == group && (best < 0 || c.losses[i] > c.losses[best])) best = i;
    }
    expected.push_back(best);
  }
  std::sort(expected.begin(), expected.end(),
            [&](int a, int b) { return c.losses[a] > c.losses[b]; });
  EXPECT_EQ(kept.indices, expected);
  EXPECT_DOUBLE_EQ(kept.weight, 5.0 / 35.0);
}

// With more picks than clusters, the extra ones split clusters: still one per cluster at least,
// no sample twice, and the weights of shrunk batches add up as their samples do.
TEST(SampleSelectionTest, MorePicksThanClustersCoverEveryCluster) {
  const Clustered c = MakeClusters(3, 8, 4, 11);
  const SelectedSamples kept = SelectSamples(c.features, 4, c.losses, 9);
  ASSERT_EQ(kept.indices.size(), 9u);
  std::set<int> groups, distinct(kept.indices.begin(), kept.indices.end());
  for (int i : kept.indices) groups.insert(c.cluster_of[i]);
  EXPECT_EQ(groups.size(), 3u);
  EXPECT_EQ(distinct.size(), 9u);
  EXPECT_TRUE(std::is_sorted(kept.indices.begin(), kept.indices.end(),
                             [&](int a, int b) { return c.losses[a] > c.losses[b]; }));
  const SelectedSamples all = SelectSamples(c.features, 4, c.losses, 24);
  EXPECT_DOUBLE_EQ(all.weight, 1.0);
  EXPECT_DOUBLE_EQ(kept.weight * 24, 9.0);
}

TEST(SampleSelectionTest, DuplicatesAreDroppedFirst) {
  // Samples 0..3 are one point, 4 and 5 distinct ones, 6 of zero features: 4 picks keep one of
  // the duplicates (the highest loss, 1) and every other sample.
  const std::vector<float> features = {1, 0, 1, 0, 1, 0, 1, 0, 0, 1, -1, 0, 0, 0};
  const std::vector<float> losses = {0.5f, 2.0f, 1.0f, 0.1f, 0.3f, 0.2f, 0.4f};
  EXPECT_EQ(SelectSamples(features, 2, losses, 4).indices, (std::vector<int>{1, 6, 4, 5}));
}

TEST(SampleSelectionTest, RandomDropKeepsDistinctSamplesFromItsSeed) {
  const SelectedSamples a = DropSamplesAtRandom(32, 12, 5), b = DropSamplesAtRandom(32, 12, 5);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_NE(a.indices, DropSamplesAtRandom(32, 12, 6).indices);
  EXPECT_EQ(std::set<int>(a.indices.begin(), a.indices.end()).size(), 12u);
  EXPECT_TRUE(std::is_sorted(a.indices.begin(), a.indices.end()));
  EXPECT_GE(a.indices.front(), 0);
  EXPECT_LT(a.indices.back(), 32);
  EXPECT_DOUBLE_EQ(a.weight, 12.0 / 32.0);
}

TEST(SampleSelectionTest, BadArgumentsNameWhatIsWrong) {
  const std::vector<float> f(6, 1.0f), l(3, 1.0f);
  EXPECT_EQ(testing::ErrorOf([&] { SelectSamples(f, 3, l, 2); }),
            "SelectSamples: 6 features for 3 samples of 3 features each");
  EXPECT_EQ(testing::ErrorOf([&] { SelectSamples(f, 2, l, 4); }),
            "SelectSamples: a target of 4 samples of a batch of 3: it must be 1..3");
  EXPECT_EQ(testing::ErrorOf([&] {
              SelectSamples(f, 2, {1.0f, NAN, 1.0f}, 2);
            }),
            "SelectSamples: the loss of sample 1 is not finite");
  EXPECT_EQ(testing::ErrorOf([&] { DropSamplesAtRandom(8, 0, 1); }),
            "DropSamplesAtRandom: a target of 0 samples of a batch of 8: it must be 1..8");
}

}  // namespace
}  // namespace pacer
