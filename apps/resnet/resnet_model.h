#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "model_parameter.h"

namespace pacer {
namespace apps {

// A ResNet for 28 x 28 grey images (Fashion-MNIST), in libtorch behind this torch-free interface
// (each file that includes torch is slow to compile).
//   arch "small": a 3 x 3 stem, then three stages of basic blocks (width, 2 x width, 4 x width;
//     (depth - 2) / 6 blocks each, as CIFAR's ResNet-20 family), average pooling, a linear layer;
//   arch "resnet50": ResNet-50's layers (7 x 7 stem, bottlenecks 3-4-6-3, widths 64 to 2048).
struct ResNetOptions {
  std::string arch = "small";
  int depth = 8;
  int width = 16;
  int classes = 10;
  int threads = 1;  // torch's intra-op threads
  unsigned seed = 0;
};

class ResNet {
 public:
  explicit ResNet(const ResNetOptions& options);  // throws std::invalid_argument for bad options
  ~ResNet();
  ResNet(const ResNet&) = delete;
  ResNet& operator=(const ResNet&) = delete;

  // The trainable tensors, in a fixed order.
  const std::vector<Parameter>& parameters() const { return parameters_; }

  void ZeroGrad();
  void ScaleGrad(float factor);
  // Adds the gradient of the mean cross-entropy over `n` images (n x 784 floats in [0, 1]) to the
  // gradients; returns that mean loss, and each image's in `losses` (n floats) unless null.
  // Training mode: batch norm uses the batch's statistics and updates its running ones.
  double Backward(const float* images, const int* labels, int n, float* losses = nullptr);
  // The fraction classified right, in evaluation mode (running statistics).
  double Accuracy(const float* images, const int* labels, int n);
  // Batch norm's running statistics computed afresh, as the exact mean and variance over `n`
  // images (forward passes only, in batches as training runs them) of the present parameters:
  // those a worker kept from its own batches follow its history (a straggler that ran few or
  // small batches, or skipped clocks, holds statistics of older parameters), so an evaluation
  // after this one measures the parameters alone ("precise BN", Wu and Johnson 2021).
  void RecomputeBatchNormStatistics(const float* images, int n, int batch);
  // Accuracy on statistics recomputed from `reference` (reference_n images, in batches of
  // `batch`), leaving the model as it was: training goes on with its own running statistics, and
  // a checkpoint holds the same state whether an evaluation came before it or not.
  double AccuracyOnRecomputedStatistics(const float* images, const int* labels, int n,
                                        const float* reference, int reference_n, int batch);
  // Parameters and batch-norm statistics to a file and back (see torch_module.h).
  void Save(const std::string& path) const;
  void Load(const std::string& path);

 private:
  struct Net;
  std::unique_ptr<Net> net_;
  std::vector<Parameter> parameters_;
};

}  // namespace apps
}  // namespace pacer
