// The default predictor: it follows a level, finds periodic slow phases and predicts them one
// step ahead (S5: slow 50 of every 200 iterations), and finds no period in noise.
#include "straggler/predictor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/fault_spec.h"

namespace pacer {
namespace straggler {
namespace {

TEST(PredictorTest, FollowsAConstantLevel) {
  auto p = MakePredictor();
  for (int i = 0; i < 50; ++i) p->Observe(0.02);
  EXPECT_NEAR(p->Predict(), 0.02, 1e-12);
  EXPECT_NEAR(p->RelativeError(), 0, 1e-12);
}

// S5's schedule on one worker (3x slow during the last 50 of every 200 iterations) with 5%
// noise: predicted stragglers, one step ahead, against the slow iterations.
TEST(PredictorTest, PredictsPeriodicSlowPhasesOneStepAhead) {
  const FaultSpec s5 = FaultSpec::Parse("worker:0:compute=3x@period=200:50");
  PeriodicPredictor p;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 0.05);
  const double fast = 0.010;  // the other workers' predicted time
  int true_positive = 0, false_positive = 0, false_negative = 0, phase_starts_predicted = 0;
  for (int64_t i = 0; i < 1600; ++i) {
    const bool slow = s5.ActiveAt(i, 0, 0, 0);
    const bool predicted = p.Predict() > 1.2 * fast;
    if (i >= 600) {  // a period to find it, one to judge the fit against the mean
      true_positive += predicted && slow;
      false_positive += predicted && !slow;
      false_negative += !predicted && slow;
      phase_starts_predicted += slow && !s5.ActiveAt(i - 1, 0, 0, 0) && predicted;
    }
    p.Observe(fast * (slow ? 3 : 1) * std::exp(noise(rng)));
  }
  const double precision = true_positive / static_cast<double>(true_positive + false_positive);
  const double recall = true_positive / static_cast<double>(true_positive + false_negative);
  EXPECT_GE(precision, 0.8);
  EXPECT_GE(recall, 0.8);
  EXPECT_EQ(p.period(), 200u);
  // The periodic fit sees each slow phase coming: all five after the warm-up are predicted at
  // their first iteration, which a mean of recent values cannot do.
  EXPECT_EQ(phase_starts_predicted, 5);
  EXPECT_LT(p.RelativeError(), 0.2);
}

// An order takes effect a step after it is sent: the prediction two steps ahead must see each
// slow phase coming from the iteration before it starts, and its end likewise.
TEST(PredictorTest, PredictsTwoStepsAhead) {
  const FaultSpec s5 = FaultSpec::Parse("worker:0:compute=3x@period=200:50");
  PeriodicPredictor p;
  const double fast = 0.010;
  int wrong = 0, judged = 0;
  for (int64_t i = 0; i < 1600; ++i) {
    if (i >= 600) {
      ++judged;
      wrong += (p.PredictAhead(2) > 1.2 * fast) != s5.ActiveAt(i + 1, 0, 0, 0);
      EXPECT_DOUBLE_EQ(p.PredictAhead(1), p.Predict());
    }
    p.Observe(fast * (s5.ActiveAt(i, 0, 0, 0) ? 3 : 1));
  }
  EXPECT_EQ(judged, 1000);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(p.period(), 200u);
}

TEST(PredictorTest, FindsNoPeriodInNoise) {
  PeriodicPredictor p;
  std::mt19937_64 rng(6);
  std::normal_distribution<double> noise(0.0, 0.2);
  for (int i = 0; i < 800; ++i) p.Observe(0.01 * std::exp(noise(rng)));
  EXPECT_EQ(p.period(), 0u);
  EXPECT_NEAR(p.Predict(), 0.01, 0.004);
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
