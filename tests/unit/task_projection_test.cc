// Falcon's straggler projection: finish times from throughput and tasks left; pioneers ahead of
// the median, stragglers behind the earliest by more than delta; the victim of a transfer.
#include "straggler/task_projection.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

namespace pacer {
namespace straggler {
namespace {

// Speeds {1, 1, 1, 1/3} task per second, 12 tasks each, 3 s into the iteration.
std::vector<WorkerProgress> OneSlowWorker() {
  return {{9, 1.0}, {9, 1.0}, {9, 1.0}, {11, 1.0 / 3}};
}

TEST(TaskProjectionTest, TheThirdSpeedWorkerIsTheStraggler) {
  const Projection p = Project(OneSlowWorker(), 3);
  EXPECT_EQ(p.finish_s, (std::vector<double>{12, 12, 12, 36}));
  EXPECT_EQ(p.stragglers, (std::vector<int>{3}));
  EXPECT_TRUE(p.pioneers.empty()) << "three equal workers sit on the median";
  EXPECT_EQ(ChooseVictim(p, {9, 9, 9, 11}), 3);
  EXPECT_EQ(ChooseVictim(p, {9, 9, 9, 0}), -1) << "nothing left to take";
}

TEST(TaskProjectionTest, FinishedWorkersArePioneersAndTheLatestStragglerIsTheVictim) {
  const Projection p = Project({{0, 1.0, 2.5}, {4, 1.0}, {6, 1.0}, {3, 0.5}}, 3);
  EXPECT_EQ(p.finish_s, (std::vector<double>{2.5, 7, 9, 9}));
  EXPECT_EQ(p.pioneers, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.stragglers, (std::vector<int>{2, 3, 1}));  // latest first; ties keep index order
  EXPECT_EQ(ChooseVictim(p, {0, 2, 0, 1}), 3);
  // A pioneer that would need until 9 s or more for one task would only make worker 3 later.
  EXPECT_EQ(ChooseVictim(p, {0, 2, 0, 1}, 8.5), 3);
  EXPECT_EQ(ChooseVictim(p, {0, 2, 0, 1}, 9), -1);
}

TEST(TaskProjectionTest, AWorkerWithoutThroughputYetIsProjectedNever) {
  const double never = std::numeric_limits<double>::infinity();
  const Projection p = Project({{4, 1.0}, {4, 0.0}}, 1);
  EXPECT_EQ(p.finish_s, (std::vector<double>{5, never}));
  EXPECT_EQ(p.stragglers, (std::vector<int>{1}));
  // Nobody measured yet: nobody is judged.
  const Projection early = Project({{4, 0.0}, {4, 0.0}}, 0);
  EXPECT_TRUE(early.pioneers.empty());
  EXPECT_TRUE(early.stragglers.empty());
}

TEST(TaskProjectionTest, BadProgressIsRefused) {
  EXPECT_THROW(Project({{-1, 1.0}}, 0), std::invalid_argument);
  EXPECT_THROW(Project({{1, -1.0}}, 0), std::invalid_argument);
  EXPECT_THROW(Project({{1, 1.0}}, -1), std::invalid_argument);
}

}  // namespace
}  // namespace straggler
}  // namespace pacer
