#include "straggler/elastic_parallelism.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace pacer {
namespace straggler {
namespace {

using Shares = std::vector<int64_t>;

TEST(ElasticParallelismTest, EqualCapacitiesShareEqually) {
  EXPECT_EQ(ElasticShares({2, 2, 2, 2}, 32, 1, 16), (Shares{8, 8, 8, 8}));
}

TEST(ElasticParallelismTest, SharesFollowCapacityAndRoundToTheLargestRemainders) {
  // S1: worker 0 at a third of the speed. Ideal 3.2, 9.6, 9.6, 9.6: finish times line up.
  EXPECT_EQ(ElasticShares({1.0 / 3, 1, 1, 1}, 32, 1, 16), (Shares{3, 10, 10, 9}));
  EXPECT_EQ(ElasticShares({1, 3}, 8, 1, 8), (Shares{2, 6}));
}

TEST(ElasticParallelismTest, UnmeasuredWorkersCountAsTheMean) {
  EXPECT_EQ(ElasticShares({0, 0, 0}, 9, 1, 9), (Shares{3, 3, 3}));
  EXPECT_EQ(ElasticShares({1, 3, 0}, 12, 1, 12), (Shares{2, 6, 4}));  // 0 counts as 2
}

TEST(ElasticParallelismTest, LimitsPinWorkersAndTheOthersShareTheRest) {
  // Worker 1 would get 14.5 of 16: its node runs at most 10, the others share 6.
  EXPECT_EQ(ElasticShares({1, 100, 1, 1}, 16, 1, 10), (Shares{2, 10, 2, 2}));
  // Worker 0 would get 0.05: it keeps its minimum of 2.
  EXPECT_EQ(ElasticShares({0.01, 1, 1, 1}, 16, 2, 16), (Shares{2, 5, 5, 4}));
  EXPECT_EQ(ElasticShares({1, 1}, 4, 2, 2), (Shares{2, 2}));
}

TEST(ElasticParallelismTest, SharesAlwaysSumToTheTotalWithinTheLimits) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> speed(0, 5);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 8);
    const int64_t min = rng() % 3, max = min + rng() % 10;
    const int64_t total = n * min + static_cast<int64_t>(rng() % (n * (max - min) + 1));
    std::vector<double> capacity(n);
    for (double& c : capacity) c = rng() % 4 == 0 ? 0 : speed(rng);
    const Shares shares = ElasticShares(capacity, total, min, max);
    ASSERT_EQ(std::accumulate(shares.begin(), shares.end(), int64_t{0}), total);
    for (int64_t s : shares) {
      ASSERT_GE(s, min);
      ASSERT_LE(s, max);
    }
  }
}

TEST(ElasticParallelismTest, ImpossibleLimitsAndBadCapacitiesAreRejected) {
  EXPECT_THROW(ElasticShares({1, 1}, 5, 1, 2), std::invalid_argument);
  EXPECT_THROW(ElasticShares({1, 1}, 1, 1, 2), std::invalid_argument);
  EXPECT_THROW(ElasticShares({}, 0, 0, 0), std::invalid_argument);
  EXPECT_THROW(ElasticShares({1, -1}, 4, 1, 4), std::invalid_argument);
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
