#pragma once

#include <string>
#include <vector>

#include "model_parameter.h"

namespace torch {
namespace nn {
class Module;
}  // namespace nn
}  // namespace torch

namespace pacer {
namespace apps {

// A libtorch module's tensors as the apps hand them to GradientSync: each trainable tensor with a
// gradient allocated now (zeros), so that both stay at their addresses for the module's life.
std::vector<Parameter> ExposeParameters(torch::nn::Module& module);
void ZeroGrad(torch::nn::Module& module);
void ScaleGrad(torch::nn::Module& module, float factor);

// A libtorch module's parameters and buffers (batch norm's statistics) to a file and back, for
// the apps' checkpoints. Loading copies into the tensors in place: GradientSync holds their
// addresses, which torch's own loading would replace. Throws std::runtime_error naming the path
// and the tensor for a file of another model.
void SaveModuleState(const torch::nn::Module& module, const std::string& path);
void LoadModuleState(torch::nn::Module& module, const std::string& path);

}  // namespace apps
}  // namespace pacer
