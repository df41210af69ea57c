#include "softmax_regression.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace pacer {
namespace examples {

Dataset MakeClusters(size_t samples, int features, int classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> centers(static_cast<size_t>(classes) * features);
  for (float& c : centers) c = 0.5f * normal(rng);
  Dataset d;
  d.features = features;
  d.classes = classes;
  d.x.resize(samples * features);
  d.y.resize(samples);
  for (size_t i = 0; i < samples; ++i) {
    const int label = static_cast<int>(rng() % classes);
    d.y[i] = label;
    for (int f = 0; f < features; ++f) {
      d.x[i * features + f] = centers[static_cast<size_t>(label) * features + f] + normal(rng);
    }
  }
  return d;
}

SoftmaxRegression::SoftmaxRegression(int features, int classes)
    : features_(features), classes_(classes) {}

double SoftmaxRegression::Loss(const Dataset& data, const std::vector<size_t>& rows,
                               const float* weights, const float* biases, float* weights_grad,
                               float* biases_grad) const {
  if (weights_grad) std::fill(weights_grad, weights_grad + weights_size(), 0.f);
  if (biases_grad) std::fill(biases_grad, biases_grad + biases_size(), 0.f);
  std::vector<float> p(classes_);
  const float inv = 1.f / static_cast<float>(rows.size());
  double loss = 0;
  for (size_t row : rows) {
    const float* x = &data.x[row * features_];
    float max_logit = -INFINITY;
    for (int c = 0; c < classes_; ++c) {
      float z = biases[c];
      for (int f = 0; f < features_; ++f) z += weights[c * features_ + f] * x[f];
      p[c] = z;
      max_logit = std::max(max_logit, z);
    }
    float total = 0;
    for (int c = 0; c < classes_; ++c) total += p[c] = std::exp(p[c] - max_logit);
    for (int c = 0; c < classes_; ++c) p[c] /= total;
    const int label = data.y[row];
    loss -= std::log(std::max(p[label], 1e-30f));
    if (!weights_grad) continue;
    for (int c = 0; c < classes_; ++c) {
      const float delta = (p[c] - (c == label ? 1.f : 0.f)) * inv;
      for (int f = 0; f < features_; ++f) weights_grad[c * features_ + f] += delta * x[f];
      if (biases_grad) biases_grad[c] += delta;
    }
  }
  return loss / static_cast<double>(rows.size());
}

double SoftmaxRegression::Accuracy(const Dataset& data, const float* weights,
                                   const float* biases) const {
  size_t right = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    const float* x = &data.x[i * features_];
    int best = 0;
    float best_z = -INFINITY;
    for (int c = 0; c < classes_; ++c) {
      float z = biases[c];
      for (int f = 0; f < features_; ++f) z += weights[c * features_ + f] * x[f];
      if (z > best_z) best_z = z, best = c;
    }
    right += best == data.y[i];
  }
  return static_cast<double>(right) / static_cast<double>(data.size());
}

std::vector<size_t> MinibatchRows(size_t samples, int workers, int worker, int64_t iteration,
                                  int batch) {
  const size_t share = (samples - worker + workers - 1) / workers;
  std::vector<size_t> rows(batch);
  for (int i = 0; i < batch; ++i) {
    const size_t k = static_cast<size_t>(iteration * batch + i) % share;
    rows[i] = worker + k * workers;
  }
  return rows;
}

std::vector<size_t> TaskRows(size_t samples, int workers, int tasks_per_worker, int64_t iteration,
                             int64_t task, int batch) {
  if (tasks_per_worker <= 0 || batch % tasks_per_worker != 0) {
    throw std::invalid_argument("a batch of " + std::to_string(batch) + " is not " +
                                std::to_string(tasks_per_worker) + " equal tasks");
  }
  const int rows = batch / tasks_per_worker;
  const std::vector<size_t> minibatch =
      MinibatchRows(samples, workers, static_cast<int>(task / tasks_per_worker), iteration, batch);
  const auto first = minibatch.begin() + (task % tasks_per_worker) * rows;
  return std::vector<size_t>(first, first + rows);
}

}  // namespace examples
}  // namespace pacer
