#include "ps/transport/inflight_limiter.h"

#include <gtest/gtest.h>

#include <thread>

namespace pacer {
namespace {

using std::chrono::milliseconds;

TEST(InflightLimiterTest, AdmitsUpToTheCapThenQueuesInOrder) {
  InflightLimiter<int> limiter(100);
  EXPECT_EQ(limiter.Admit(0, 60, 1), 1);
  EXPECT_EQ(limiter.Admit(0, 40, 2), 2);  // exactly at the cap
  EXPECT_EQ(limiter.Admit(0, 10, 3), std::nullopt);
  EXPECT_EQ(limiter.Admit(0, 5, 4), std::nullopt);  // behind 3, even though it would fit later
  EXPECT_EQ(limiter.Admit(1, 100, 5), 5);           // other destinations are independent
  EXPECT_EQ(limiter.Complete(0, 40), (std::vector<int>{3, 4}));
}

TEST(InflightLimiterTest, OversizedSendGoesAlone) {
  InflightLimiter<int> limiter(100);
  EXPECT_EQ(limiter.Admit(0, 500, 1), 1);
  EXPECT_EQ(limiter.Admit(0, 1, 2), std::nullopt);
  EXPECT_EQ(limiter.Admit(0, 300, 3), std::nullopt);
  EXPECT_EQ(limiter.Complete(0, 500), (std::vector<int>{2}));  // 300 does not fit beside 1
  EXPECT_EQ(limiter.Complete(0, 1), (std::vector<int>{3}));
}

TEST(InflightLimiterTest, WaitIdleWaitsForEveryCompletion) {
  InflightLimiter<int> limiter(10);
  EXPECT_TRUE(limiter.WaitIdle(milliseconds(1)));
  limiter.Admit(0, 10, 1);
  limiter.Admit(0, 10, 2);
  EXPECT_FALSE(limiter.WaitIdle(milliseconds(5)));
  std::thread completer([&] {
    for (int x : limiter.Complete(0, 10)) EXPECT_EQ(x, 2);
    limiter.Complete(0, 10);
  });
  EXPECT_TRUE(limiter.WaitIdle(milliseconds(5000)));
  completer.join();
}

}  // namespace
}  // namespace pacer
