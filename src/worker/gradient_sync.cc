#include "pacer/gradient_sync.h"

#include "worker/worker_iterations.h"

namespace pacer {

GradientSync::GradientSync(Node& node, int app_id)
    : iterations_(std::make_unique<WorkerIterations>(node, app_id)) {}
GradientSync::~GradientSync() = default;
void GradientSync::Register(const std::string& name, float* param, size_t count) {
  iterations_->Register(name, param, count);
}
void GradientSync::Broadcast() { iterations_->Broadcast(); }
void GradientSync::Fetch() { iterations_->Fetch(); }
void GradientSync::Checkpoint(const std::string& path) { iterations_->Checkpoint(path); }
void GradientSync::Resume(const std::string& path) { iterations_->Resume(path); }
int GradientSync::PushPull(const std::string& name, const float* grad, float* param, int priority) {
  return iterations_->PushPull(name, grad, param, priority);
}
void GradientSync::Wait(int handle) { iterations_->Wait(handle); }
void GradientSync::WaitAll() { iterations_->WaitAll(); }
void GradientSync::BeginIteration(int batch_size) { iterations_->BeginIteration(batch_size); }
void GradientSync::EndIteration() { iterations_->EndIteration(); }
void GradientSync::UseTasks(int64_t tasks_per_worker, int64_t task_limit) {
  iterations_->UseTasks(tasks_per_worker, task_limit);
}
std::optional<Task> GradientSync::NextTask() { return iterations_->NextTask(); }
void GradientSync::EmulateCompute(double ms) { iterations_->EmulateCompute(ms); }
int64_t GradientSync::clock() const { return iterations_->clock(); }
void GradientSync::set_weight(double weight) { iterations_->set_weight(weight); }
double GradientSync::weight() const { return iterations_->weight(); }
void GradientSync::ReportAccuracy(double accuracy) { iterations_->ReportAccuracy(accuracy); }
void GradientSync::AllowBatchSizes(const std::vector<int>& sizes) {
  iterations_->AllowBatchSizes(sizes);
}
int GradientSync::batch_size(int fallback) const { return iterations_->batch_size(fallback); }
const IterationStats& GradientSync::last_iteration() const { return iterations_->last_iteration(); }

}  // namespace pacer
