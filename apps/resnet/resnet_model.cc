#include "resnet_model.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "torch_module.h"

namespace pacer {
namespace apps {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int in, int out, int kernel, int stride) {
  return nn::Conv2d(
      nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// The identity, or a 1 x 1 convolution and batch norm where the shape changes.
nn::Sequential Shortcut(int in, int out, int stride) {
  nn::Sequential s;
  if (stride != 1 || in != out) {
    s->push_back(Conv(in, out, 1, stride));
    s->push_back(nn::BatchNorm2d(out));
  }
  return s;
}

torch::Tensor Add(nn::Sequential shortcut, const torch::Tensor& x, torch::Tensor y) {
  return torch::relu(y + (shortcut->is_empty() ? x : shortcut->forward(x)));
}

struct BasicBlockImpl : nn::Module {
  BasicBlockImpl(int in, int out, int stride)
      : conv1(register_module("conv1", Conv(in, out, 3, stride))),
        bn1(register_module("bn1", nn::BatchNorm2d(out))),
        conv2(register_module("conv2", Conv(out, out, 3, 1))),
        bn2(register_module("bn2", nn::BatchNorm2d(out))),
        shortcut(register_module("shortcut", Shortcut(in, out, stride))) {}
  torch::Tensor forward(torch::Tensor x) {
    return Add(shortcut, x, bn2(conv2(torch::relu(bn1(conv1(x))))));
  }
  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  nn::Sequential shortcut;
};
TORCH_MODULE(BasicBlock);

struct BottleneckImpl : nn::Module {
  BottleneckImpl(int in, int width, int stride)
      : conv1(register_module("conv1", Conv(in, width, 1, 1))),
        bn1(register_module("bn1", nn::BatchNorm2d(width))),
        conv2(register_module("conv2", Conv(width, width, 3, stride))),
        bn2(register_module("bn2", nn::BatchNorm2d(width))),
        conv3(register_module("conv3", Conv(width, 4 * width, 1, 1))),
        bn3(register_module("bn3", nn::BatchNorm2d(4 * width))),
        shortcut(register_module("shortcut", Shortcut(in, 4 * width, stride))) {}
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor y = torch::relu(bn1(conv1(x)));
    return Add(shortcut, x, bn3(conv3(torch::relu(bn2(conv2(y))))));
  }
  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  nn::Conv2d conv3;
  nn::BatchNorm2d bn3;
  nn::Sequential shortcut;
};
TORCH_MODULE(Bottleneck);

}  // namespace

struct ResNet::Net : nn::Module {
  explicit Net(const ResNetOptions& o) {
    int channels = 0;
    if (o.arch == "small") {
      if (o.depth < 8 || (o.depth - 2) % 6 != 0 || o.width < 1) {
        throw std::invalid_argument(
            "--arch=small needs --depth = 6n + 2 >= 8 and --width >= 1, not " +
            std::to_string(o.depth) + " and " + std::to_string(o.width));
      }
      stem->push_back(Conv(1, o.width, 3, 1));
      stem->push_back(nn::BatchNorm2d(o.width));
      stem->push_back(nn::Functional([](torch::Tensor x) { return torch::relu(x); }));
      channels = o.width;
      for (int stage = 0; stage < 3; ++stage) {
        const int out = o.width << stage;
        for (int b = 0; b < (o.depth - 2) / 6; ++b) {
          blocks->push_back(BasicBlock(channels, out, b == 0 && stage > 0 ? 2 : 1));
          channels = out;
        }
      }
    } else if (o.arch == "resnet50") {
      stem->push_back(Conv(1, 64, 7, 2));
      stem->push_back(nn::BatchNorm2d(64));
      stem->push_back(nn::Functional([](torch::Tensor x) { return torch::relu(x); }));
      stem->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
      channels = 64;
      const int counts[4] = {3, 4, 6, 3};
      for (int stage = 0; stage < 4; ++stage) {
        for (int b = 0; b < counts[stage]; ++b) {
          blocks->push_back(Bottleneck(channels, 64 << stage, b == 0 && stage > 0 ? 2 : 1));
          channels = 4 * (64 << stage);
        }
      }
    } else {
      throw std::invalid_argument("--arch=" + o.arch + ": expected small or resnet50");
    }
    register_module("stem", stem);
    register_module("blocks", blocks);
    fc = register_module("fc", nn::Linear(channels, o.classes));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = blocks->forward(stem->forward((x - 0.2860) / 0.3530));
    return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
  nn::Sequential stem, blocks;
  nn::Linear fc{nullptr};
};

ResNet::ResNet(const ResNetOptions& options) {
  torch::set_num_threads(options.threads);
  torch::manual_seed(options.seed);
  net_ = std::make_unique<Net>(options);
  parameters_ = ExposeParameters(*net_);
}

ResNet::~ResNet() = default;

void ResNet::ZeroGrad() { apps::ZeroGrad(*net_); }
void ResNet::ScaleGrad(float factor) { apps::ScaleGrad(*net_, factor); }

double ResNet::Backward(const float* images, const int* labels, int n, float* losses) {
  namespace F = torch::nn::functional;
  net_->train();
  const torch::Tensor x = torch::from_blob(const_cast<float*>(images), {n, 1, 28, 28});
  const torch::Tensor y =
      torch::from_blob(const_cast<int*>(labels), {n}, torch::kInt32).to(torch::kLong);
  const torch::Tensor each =
      F::cross_entropy(net_->forward(x), y, F::CrossEntropyFuncOptions().reduction(torch::kNone));
  torch::Tensor loss = each.mean();
  loss.backward();
  if (losses != nullptr) {
    const torch::Tensor values = each.detach().contiguous();
    std::copy(values.data_ptr<float>(), values.data_ptr<float>() + n, losses);
  }
  return loss.item<double>();
}

void ResNet::Save(const std::string& path) const { SaveModuleState(*net_, path); }
void ResNet::Load(const std::string& path) { LoadModuleState(*net_, path); }

void ResNet::RecomputeBatchNormStatistics(const float* images, int n, int batch) {
  torch::NoGradGuard no_grad;
  std::vector<std::pair<nn::BatchNorm2dImpl*, c10::optional<double>>> norms;
  for (const auto& module : net_->modules(/*include_self=*/false)) {
    if (auto* bn = module->as<nn::BatchNorm2d>()) {
      norms.emplace_back(bn, bn->options.momentum());
      bn->reset_running_stats();
      bn->options.momentum(c10::nullopt);  // a cumulative average: every batch counts the same
    }
  }
  net_->train();
  for (int first = 0; first < n; first += batch) {
    const int m = std::min(batch, n - first);
    net_->forward(torch::from_blob(const_cast<float*>(images + static_cast<size_t>(first) * 784),
                                   {m, 1, 28, 28}));
  }
  for (auto& [bn, momentum] : norms) bn->options.momentum(momentum);
}

double ResNet::AccuracyOnRecomputedStatistics(const float* images, const int* labels, int n,
                                              const float* reference, int reference_n, int batch) {
  std::vector<torch::Tensor> kept;
  for (const auto& buffer : net_->buffers()) kept.push_back(buffer.clone());
  RecomputeBatchNormStatistics(reference, reference_n, batch);
  const double accuracy = Accuracy(images, labels, n);
  torch::NoGradGuard no_grad;
  size_t i = 0;
  for (auto& buffer : net_->buffers()) buffer.copy_(kept[i++]);
  return accuracy;
}

double ResNet::Accuracy(const float* images, const int* labels, int n) {
  torch::NoGradGuard no_grad;
  net_->eval();
  int64_t right = 0;
  for (int first = 0; first < n; first += 500) {
    const int m = std::min(500, n - first);
    const torch::Tensor x = torch::from_blob(
        const_cast<float*>(images + static_cast<size_t>(first) * 784), {m, 1, 28, 28});
    const torch::Tensor y =
        torch::from_blob(const_cast<int*>(labels + first), {m}, torch::kInt32).to(torch::kLong);
    right += net_->forward(x).argmax(1).eq(y).sum().item<int64_t>();
  }
  return static_cast<double>(right) / n;
}

}  // namespace apps
}  // namespace pacer
