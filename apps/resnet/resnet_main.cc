// pacer-resnet: a ResNet trained on Fashion-MNIST through GradientSync (issue 9).
//
//   mpirun -np 6 build/bin/pacer-resnet --servers 1 --epochs=3
//   mpirun -np 6 build/bin/pacer-resnet --servers 1 --scenario=S1 --policy=epsp:0 --tasks=4
//
// Each worker trains on every workers-th image (--batch per iteration), the servers apply the
// job's --optimizer (default SGD with momentum) by its --sync rule; --policy and --scenario take
// the scenario harness's names (--inject, --metrics and the other session flags work as anywhere).
// --tasks=N splits each minibatch into N micro-batches that GradientSync hands out (under epsp:S
// the others take a slow worker's). Worker 0 measures test accuracy every epoch (or --eval-every
// iterations), shows progress, and prints a summary (--json writes it). The loop and its flags:
// apps/common/training_job.cc.
#include <gflags/gflags.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "app_roles.h"
#include "fashion_mnist.h"
#include "resnet_model.h"
#include "training_job.h"

DEFINE_string(arch, "small", "small (3 stages of basic blocks) or resnet50");
DEFINE_int32(depth, 8, "small: layers, 6n + 2 (8: one block per stage, 20: ResNet-20)");
DEFINE_int32(width, 16, "small: channels of the first stage (then 2x, 4x)");
DEFINE_int32(threads, 1, "torch threads per worker");
DEFINE_string(data, pacer::examples::kFashionMnistDir, "Fashion-MNIST directory");
DEFINE_int32(eval_images, 0, "held-out images worker 0 evaluates, the first of t10k (0: all)");
DECLARE_int32(batch);  // training_job.cc's: batch norm's statistics come in batches of its size

namespace pacer {
namespace apps {
namespace {

using examples::Dataset;

class ResNetWorkload : public Workload {
  // Batch norm's statistics for an evaluation: from the first training images, in batches of
  // --batch (about a third of the time of evaluating 1000 images).
  static constexpr size_t kStatisticsImages = 512;

 public:
  ResNetWorkload(bool evaluator, bool synthetic) : model_(Options()) {
    if (FLAGS_eval_images < 0) {
      throw std::invalid_argument("--eval_images=" + std::to_string(FLAGS_eval_images) +
                                  ": expected 0 (all) or more");
    }
    if (synthetic) return;
    train_ = examples::LoadFashionMnist(FLAGS_data, "train");
    if (evaluator) test_ = examples::LoadFashionMnist(FLAGS_data, "t10k");
    if (FLAGS_eval_images > 0 && static_cast<size_t>(FLAGS_eval_images) < test_.size()) {
      test_.y.resize(FLAGS_eval_images);
      test_.x.resize(test_.y.size() * test_.features);
    }
  }

  std::string name() const override {
    return FLAGS_arch == "small" ? "resnet" + std::to_string(FLAGS_depth) : FLAGS_arch;
  }
  const std::vector<Parameter>& parameters() const override { return model_.parameters(); }
  size_t train_size() const override { return train_.size(); }
  void ZeroGrad() override { model_.ZeroGrad(); }
  void ScaleGrad(float factor) override { model_.ScaleGrad(factor); }
  // Batch norm has no randomness: the seed goes unused.
  double Backward(const std::vector<size_t>& rows, uint64_t) override {
    Gather(rows);
    losses_.resize(rows.size());
    const double loss = model_.Backward(images_.data(), labels_.data(),
                                        static_cast<int>(rows.size()), losses_.data());
    if (last_loss_.empty()) last_loss_.assign(train_.size(), -1.f);
    for (size_t i = 0; i < rows.size(); ++i) last_loss_[rows[i]] = losses_[i];
    last_mean_loss_ = static_cast<float>(loss);
    return loss;
  }
  // Cheap features, as SMS asks: the images themselves, and each one's loss when it was last
  // trained on (one not seen yet: the last batch's mean loss). No extra pass.
  bool Describe(const std::vector<size_t>& rows, std::vector<float>* features, int* dim,
                std::vector<float>* losses) override {
    Gather(rows);
    *features = images_;
    *dim = static_cast<int>(train_.features);
    losses->clear();
    for (size_t r : rows) {
      const float seen = last_loss_.empty() ? -1.f : last_loss_[r];
      losses->push_back(seen >= 0 ? seen : last_mean_loss_);
    }
    return true;
  }
  double Evaluate() override {
    const int images = static_cast<int>(std::min<size_t>(kStatisticsImages, train_.size()));
    return model_.AccuracyOnRecomputedStatistics(test_.x.data(), test_.y.data(),
                                                 static_cast<int>(test_.size()), train_.x.data(),
                                                 images, FLAGS_batch);
  }
  void Save(const std::string& path) override { model_.Save(path); }
  void Load(const std::string& path) override { model_.Load(path); }

 private:
  static ResNetOptions Options() {
    ResNetOptions options;
    options.arch = FLAGS_arch;
    options.depth = FLAGS_depth;
    options.width = FLAGS_width;
    options.threads = FLAGS_threads;
    return options;
  }

  void Gather(const std::vector<size_t>& rows) {
    images_.clear();
    labels_.clear();
    for (size_t r : rows) {
      images_.insert(images_.end(), train_.x.begin() + r * train_.features,
                     train_.x.begin() + (r + 1) * train_.features);
      labels_.push_back(train_.y[r]);
    }
  }

  ResNet model_;
  Dataset train_, test_;
  std::vector<float> images_, losses_;
  std::vector<int> labels_;
  std::vector<float> last_loss_;  // per training image, its loss when last trained on (-1: never)
  float last_mean_loss_ = 0;
};

int Run(int argc, char** argv) {
  TrainingApp app;
  app.program = "pacer-resnet";
  app.unit = "img";
  // A ResNet wants momentum and a larger step than the library's default, then smaller ones.
  app.defaults = {{"optimizer", "sgd:lr=0.05,momentum=0.9"}, {"lr_decay_at", "0.5,0.75"}};
  app.make = [](bool evaluator, bool synthetic) {
    return std::make_unique<ResNetWorkload>(evaluator, synthetic);
  };
  return RunTrainingApp(argc, argv, app);
}

}  // namespace
}  // namespace apps
}  // namespace pacer

int main(int argc, char** argv) {
  return pacer::bench::GuardedMain("pacer-resnet", pacer::apps::Run, argc, argv);
}
