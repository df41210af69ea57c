#include "torch_module.h"

#include <torch/torch.h>

#include <sstream>
#include <stdexcept>

namespace pacer {
namespace apps {
namespace {

// c10::Error's what() carries a backtrace after its first line, the message.
std::runtime_error Failure(const std::string& what, const std::exception& e) {
  const std::string why = e.what();
  return std::runtime_error(what + ": " + why.substr(0, why.find('\n')));
}

}  // namespace

std::vector<Parameter> ExposeParameters(torch::nn::Module& module) {
  std::vector<Parameter> parameters;
  for (auto& item : module.named_parameters()) {
    torch::Tensor& p = item.value();
    p.mutable_grad() = torch::zeros_like(p);
    parameters.push_back({item.key(), p.data_ptr<float>(), p.mutable_grad().data_ptr<float>(),
                          static_cast<size_t>(p.numel())});
  }
  return parameters;
}

void ZeroGrad(torch::nn::Module& module) {
  for (auto& p : module.parameters()) p.mutable_grad().zero_();
}

void ScaleGrad(torch::nn::Module& module, float factor) {
  for (auto& p : module.parameters()) p.mutable_grad().mul_(factor);
}

void SaveModuleState(const torch::nn::Module& module, const std::string& path) {
  try {
    torch::serialize::OutputArchive archive;
    for (const auto& item : module.named_parameters()) archive.write(item.key(), item.value());
    for (const auto& item : module.named_buffers()) archive.write(item.key(), item.value(), true);
    archive.save_to(path);
  } catch (const std::exception& e) {
    throw Failure("cannot write the model's state to " + path, e);
  }
}

void LoadModuleState(torch::nn::Module& module, const std::string& path) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const std::exception& e) {
    throw Failure("cannot read the model's state from " + path, e);
  }
  torch::NoGradGuard no_grad;
  auto load = [&](const std::string& name, torch::Tensor& into, bool buffer) {
    torch::Tensor saved;
    if (!archive.try_read(name, saved, buffer)) {
      throw std::runtime_error(path + " holds no tensor '" + name + "': another model's state");
    }
    if (!saved.sizes().equals(into.sizes())) {
      std::ostringstream why;
      why << path << ": '" << name << "' has shape " << saved.sizes() << ", the model's "
          << into.sizes();
      throw std::runtime_error(why.str());
    }
    into.copy_(saved);
  };
  for (auto& item : module.named_parameters()) load(item.key(), item.value(), false);
  for (auto& item : module.named_buffers()) load(item.key(), item.value(), true);
}

}  // namespace apps
}  // namespace pacer
