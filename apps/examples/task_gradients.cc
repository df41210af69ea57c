#include "task_gradients.h"

#include <algorithm>
#include <optional>

namespace pacer {
namespace examples {

int TaskGradients(GradientSync& sync, const Dataset& data, const SoftmaxRegression& model,
                  int workers, int tasks_per_worker, int batch, const std::vector<float>& w,
                  const std::vector<float>& b, std::vector<float>& w_grad,
                  std::vector<float>& b_grad, const std::function<void(const Task&)>& on_task,
                  double* loss) {
  std::vector<float> tw(w.size()), tb(b.size());
  std::fill(w_grad.begin(), w_grad.end(), 0.f);
  std::fill(b_grad.begin(), b_grad.end(), 0.f);
  double loss_sum = 0;
  int computed = 0;
  while (std::optional<Task> task = sync.NextTask()) {
    loss_sum += model.Loss(
        data, TaskRows(data.size(), workers, tasks_per_worker, task->clock, task->id, batch),
        w.data(), b.data(), tw.data(), tb.data());
    if (on_task) on_task(*task);
    for (size_t k = 0; k < tw.size(); ++k) w_grad[k] += tw[k];
    for (size_t k = 0; k < tb.size(); ++k) b_grad[k] += tb[k];
    ++computed;
  }
  if (loss) *loss = computed == 0 ? 0 : loss_sum / computed;
  if (computed == 0) return 0;
  const float mean = 1.f / static_cast<float>(computed);
  for (float& v : w_grad) v *= mean;
  for (float& v : b_grad) v *= mean;
  return computed;
}

}  // namespace examples
}  // namespace pacer
