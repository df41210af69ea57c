#include "module_state.h"

#include <torch/torch.h>

#include <stdexcept>

namespace pacer {
namespace apps {

void SaveModuleState(const torch::nn::Module& module, const std::string& path) {
  torch::serialize::OutputArchive archive;
  for (const auto& item : module.named_parameters()) archive.write(item.key(), item.value());
  for (const auto& item : module.named_buffers()) archive.write(item.key(), item.value(), true);
  try {
    archive.save_to(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot write the model's state to " + path + ": " + e.msg());
  }
}

void LoadModuleState(torch::nn::Module& module, const std::string& path) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot read the model's state from " + path + ": " + e.msg());
  }
  torch::NoGradGuard no_grad;
  auto load = [&](const std::string& name, torch::Tensor& into, bool buffer) {
    torch::Tensor saved;
    if (!archive.try_read(name, saved, buffer) || !saved.sizes().equals(into.sizes())) {
      throw std::runtime_error(path + " holds no tensor '" + name + "' of this model's shape");
    }
    into.copy_(saved);
  };
  for (auto& item : module.named_parameters()) load(item.key(), item.value(), false);
  for (auto& item : module.named_buffers()) load(item.key(), item.value(), true);
}

}  // namespace apps
}  // namespace pacer
