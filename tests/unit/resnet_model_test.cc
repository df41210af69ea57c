// pacer-resnet's model (apps/resnet/resnet_model.h): batch norm's statistics for an evaluation are
// those of the parameters and the images given, whatever batches the worker trained on before.
#include "resnet_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace pacer {
namespace apps {
namespace {

// `n` 28 x 28 images, each pixel from a hash of `seed`, in [0, 1], brighter by `bias`.
std::vector<float> Images(int n, unsigned seed, float bias) {
  std::vector<float> images(static_cast<size_t>(n) * 784);
  unsigned state = seed;
  for (float& x : images) {
    state = state * 1664525u + 1013904223u;
    x = std::min(1.f, bias + static_cast<float>(state >> 8) / static_cast<float>(1u << 24));
  }
  return images;
}

// The model's saved state (its archive names the file: one name for every model).
std::string Saved(const ResNet& model) {
  const std::string path = ::testing::TempDir() + "resnet_model_test.pt";
  model.Save(path);
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Two models with the same parameters, one of which has run batches of other images: their saved
// states (parameters and batch norm's statistics) differ until both recompute the statistics on
// the same images; then they are the same, byte for byte.
TEST(ResNetModelTest, RecomputedBatchNormStatisticsFollowTheParametersAlone) {
  ResNet fresh(ResNetOptions{}), trained(ResNetOptions{});
  const std::vector<float> reference = Images(64, 1, 0.f), elsewhere = Images(16, 2, 0.5f);
  const std::vector<int> labels(16, 3);
  for (int round = 0; round < 5; ++round) {  // gradients only: the parameters stay as they are
    trained.Backward(elsewhere.data(), labels.data(), 16);
  }
  ASSERT_FALSE(Saved(trained) == Saved(fresh));
  fresh.RecomputeBatchNormStatistics(reference.data(), 64, 32);
  trained.RecomputeBatchNormStatistics(reference.data(), 64, 32);
  const std::string recomputed = Saved(fresh);
  EXPECT_TRUE(Saved(trained) == recomputed);
  // The statistics are the images': others give others.
  const std::vector<float> brighter = Images(64, 1, 0.25f);
  fresh.RecomputeBatchNormStatistics(brighter.data(), 64, 32);
  EXPECT_FALSE(Saved(fresh) == recomputed);
}

// An evaluation on recomputed statistics leaves the model as it was, and measures the parameters
// alone: two models that trained on different batches evaluate alike.
TEST(ResNetModelTest, AnEvaluationOnRecomputedStatisticsLeavesTheModelAsItWas) {
  ResNet fresh(ResNetOptions{}), trained(ResNetOptions{});
  const std::vector<float> elsewhere = Images(16, 2, 0.5f), reference = Images(64, 1, 0.f);
  const std::vector<float> test = Images(50, 3, 0.1f);
  const std::vector<int> labels(16, 3), test_labels(50, 7);
  trained.Backward(elsewhere.data(), labels.data(), 16);
  const std::string before = Saved(trained);
  const double accuracy = trained.AccuracyOnRecomputedStatistics(test.data(), test_labels.data(),
                                                                 50, reference.data(), 64, 32);
  EXPECT_TRUE(Saved(trained) == before);
  EXPECT_EQ(fresh.AccuracyOnRecomputedStatistics(test.data(), test_labels.data(), 50,
                                                 reference.data(), 64, 32),
            accuracy);
}

}  // namespace
}  // namespace apps
}  // namespace pacer
