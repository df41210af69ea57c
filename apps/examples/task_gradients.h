#pragma once

#include <pacer/gradient_sync.h>
#include <pacer/task.h>

#include <functional>
#include <vector>

#include "softmax_regression.h"

namespace pacer {
namespace examples {

// One iteration of a training loop over tasks (GradientSync::UseTasks): computes every task the
// worker gets, the gradient of each micro-batch (TaskRows: `tasks_per_worker` tasks of `batch`
// rows per worker), and leaves their mean in w_grad, b_grad (zeros if it got none). `on_task`, if
// set, runs for each task after its gradient (an emulated compute, a per-task record). Returns
// the tasks computed; `loss`, if set, receives their mean loss.
int TaskGradients(GradientSync& sync, const Dataset& data, const SoftmaxRegression& model,
                  int workers, int tasks_per_worker, int batch, const std::vector<float>& w,
                  const std::vector<float>& b, std::vector<float>& w_grad,
                  std::vector<float>& b_grad, const std::function<void(const Task&)>& on_task,
                  double* loss = nullptr);

}  // namespace examples
}  // namespace pacer
