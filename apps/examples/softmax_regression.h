#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pacer {
namespace examples {

// Labeled points in `features` dimensions, `classes` well-separated Gaussian clusters (one per
// class): a data set a linear model separates, for the examples and the synchronization tests.
struct Dataset {
  int features = 0;
  int classes = 0;
  std::vector<float> x;  // size() rows of `features`
  std::vector<int> y;
  size_t size() const { return y.size(); }
};

Dataset MakeClusters(size_t samples, int features, int classes, uint64_t seed);

// Softmax regression: logits = W x + b, cross-entropy loss. Parameters are two tensors, the
// weights (classes x features) and the biases (classes).
class SoftmaxRegression {
 public:
  SoftmaxRegression(int features, int classes);

  size_t weights_size() const { return static_cast<size_t>(classes_) * features_; }
  size_t biases_size() const { return static_cast<size_t>(classes_); }

  // Mean loss over the samples `rows` of `data`; if the gradient pointers are set, they receive
  // the mean gradient.
  double Loss(const Dataset& data, const std::vector<size_t>& rows, const float* weights,
              const float* biases, float* weights_grad = nullptr,
              float* biases_grad = nullptr) const;
  // Fraction of `data` classified right.
  double Accuracy(const Dataset& data, const float* weights, const float* biases) const;

 private:
  int features_;
  int classes_;
};

// Rows of worker `worker`'s `batch`-sized minibatch at iteration `iteration`: each of `workers`
// workers owns every workers-th sample, and walks through its share in order.
std::vector<size_t> MinibatchRows(size_t samples, int workers, int worker, int64_t iteration,
                                  int batch);

// Rows of task `task` of iteration `iteration` when each minibatch is `tasks_per_worker` tasks
// (GradientSync::UseTasks): the (task % tasks_per_worker)-th slice of worker
// task / tasks_per_worker's minibatch, so the tasks of a worker's share together are its
// minibatch. `batch` must be a multiple of tasks_per_worker.
std::vector<size_t> TaskRows(size_t samples, int workers, int tasks_per_worker, int64_t iteration,
                             int64_t task, int batch);

}  // namespace examples
}  // namespace pacer
