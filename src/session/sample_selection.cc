#include "pacer/sample_selection.h"

#include <stdexcept>

#include "pacer/error.h"
#include "straggler/sample_selection.h"

namespace pacer {
namespace {

template <typename Select>
SelectedSamples Selected(const char* name, int batch, Select select) {
  SelectedSamples selected;
  try {
    selected.indices = select();
  } catch (const std::invalid_argument& e) {
    throw Error(std::string(name) + ": " + e.what());
  }
  selected.weight = static_cast<double>(selected.indices.size()) / batch;
  return selected;
}

}  // namespace

SelectedSamples SelectSamples(const std::vector<float>& features, int dim,
                              const std::vector<float>& losses, int target) {
  return Selected("SelectSamples", static_cast<int>(losses.size()),
                  [&] { return straggler::SelectRepresentatives(features, dim, losses, target); });
}

SelectedSamples DropSamplesAtRandom(int batch, int target, uint64_t seed) {
  return Selected("DropSamplesAtRandom", batch,
                  [&] { return straggler::DropAtRandom(batch, target, seed); });
}

}  // namespace pacer
