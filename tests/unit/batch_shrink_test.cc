// The apps' batch shrink (apps/common/batch_shrink.h): dedup keeps one sample per cluster of the
// model's features, the highest-loss one; random drop, or a model without features, keeps what
// DropSamplesAtRandom draws; --shrink names a worker and a size of the job, and no tasks.
#include "batch_shrink.h"

#include <gflags/gflags.h>
#include <gtest/gtest.h>
#include <pacer/sample_selection.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/error_of.h"

DECLARE_string(shrink_select);
DECLARE_string(shrink);

namespace pacer {
namespace apps {
namespace {

// Rows 10..18 in three clusters of three (orthogonal features), losses rising within each; or a
// model that describes nothing.
class ClusteredModel : public Workload {
 public:
  explicit ClusteredModel(bool describes) : describes_(describes) {}
  std::string name() const override { return "clusters"; }
  const std::vector<Parameter>& parameters() const override { return parameters_; }
  size_t train_size() const override { return 19; }
  void ZeroGrad() override {}
  void ScaleGrad(float) override {}
  double Backward(const std::vector<size_t>&, uint64_t) override { return 0; }
  double Evaluate() override { return 0; }
  void Save(const std::string&) override {}
  void Load(const std::string&) override {}
  bool Describe(const std::vector<size_t>& rows, std::vector<float>* features, int* dim,
                std::vector<float>* losses) override {
    if (!describes_) return false;
    *dim = 3;
    features->clear();
    losses->clear();
    for (size_t r : rows) {
      const size_t i = r - 10;
      for (size_t d = 0; d < 3; ++d) features->push_back(d == i / 3 ? 1.f : 0.f);
      losses->push_back(static_cast<float>(i % 3));
    }
    return true;
  }

 private:
  bool describes_;
  std::vector<Parameter> parameters_;
};

const std::vector<size_t> kRows = {10, 11, 12, 13, 14, 15, 16, 17, 18};

struct FlagsRestored {
  ~FlagsRestored() {
    FLAGS_shrink_select = "random";
    FLAGS_shrink = "";
  }
};

TEST(BatchShrinkTest, DedupKeepsTheHighestLossSampleOfEachCluster) {
  FlagsRestored restore;
  FLAGS_shrink_select = "dedup";
  ClusteredModel model(true);
  std::vector<size_t> kept = ShrinkRows(model, kRows, 3, 7);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<size_t>{12, 15, 18}));
}

TEST(BatchShrinkTest, RandomDropOrAModelWithoutFeaturesDrawsFromTheSeed) {
  FlagsRestored restore;
  std::vector<size_t> drawn;
  for (int i : DropSamplesAtRandom(9, 3, 7).indices) drawn.push_back(kRows[i]);
  std::vector<size_t> sorted = drawn;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_NE(sorted, (std::vector<size_t>{12, 15, 18})) << "the draw must differ from dedup's";
  ClusteredModel describing(true), silent(false);
  EXPECT_EQ(ShrinkRows(describing, kRows, 3, 7), drawn);  // --shrink-select=random
  FLAGS_shrink_select = "dedup";
  EXPECT_EQ(ShrinkRows(silent, kRows, 3, 7), drawn);
}

TEST(BatchShrinkTest, FlagsNameWhatIsWrong) {
  FlagsRestored restore;
  using testing::ErrorOf;
  auto check = [](int workers, int batch, bool tasks) {
    return ErrorOf<std::invalid_argument>([&] { CheckShrinkFlags(workers, batch, tasks); });
  };
  EXPECT_EQ(check(2, 32, false), "(no error)");
  FLAGS_shrink = "1:8";
  EXPECT_EQ(check(2, 32, false), "(no error)");
  EXPECT_EQ(FixedShrink(1, 32), 8);
  EXPECT_EQ(FixedShrink(0, 32), 32);
  EXPECT_EQ(check(1, 32, false), "--shrink=1:8: expected a worker of 0..0 and a size of 1..32");
  EXPECT_EQ(check(2, 32, true), "--shrink=1:8 with --tasks: tasks set their own sizes and weights");
  FLAGS_shrink = "1:x";
  EXPECT_EQ(check(2, 32, false), "--shrink=1:x: expected WORKER:SIZE");
  FLAGS_shrink = "";
  FLAGS_shrink_select = "best";
  EXPECT_EQ(check(2, 32, false), "--shrink-select=best: expected dedup or random");
}

}  // namespace
}  // namespace apps
}  // namespace pacer
