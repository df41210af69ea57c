#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/str_cat.h"
#include "pacer/detail/routed_client.h"
#include "pacer/error.h"
#include "pacer/gradient_sync.h"
#include "ps/node/node.h"
#include "worker/batch_orders.h"
#include "worker/key_requests.h"
#include "worker/link_probe.h"
#include "worker/task_source.h"
#include "worker/tensor_layout.h"

namespace pacer {

// One worker's iterations under GradientSync: its tensors cut into keys, the broadcast of the
// first values, each iteration's pushes and pulls with their clocks and weights, its tasks, its
// reports to the scheduler, and checkpoints. Its files: worker_iterations.cc (iterations,
// broadcast, tasks) and worker_iterations_checkpoint.cc (checkpoint and resume).
class WorkerIterations {
 public:
  using SteadyClock = std::chrono::steady_clock;

  WorkerIterations(Node& node, int app_id)
      : node_(node),
        measure_norms_(node.config().sync == "auto"),
        app_id_(app_id),
        kv_(node, app_id, sizeof(float)),
        layout_(static_cast<size_t>(std::max<int64_t>(node.config().partition_bytes, 4)) /
                sizeof(float)),
        requests_(kv_, layout_, std::max(1, node.config().scheduling_credit),
                  node.config().skip_eps) {
    // The scheduler's relay orders are for the job's model, app 0's.
    if (app_id == 0) {
      relay_ = std::make_unique<RelayLink>(node);
      probe_ = std::make_unique<LinkProbe>(node);
      batches_ = std::make_unique<BatchOrders>(node);
    }
    requests_.set_relay(relay_.get());
  }

  void Register(const std::string& name, float* param, size_t count) {
    if (broadcast_done_) {
      throw Error(StrCat("tensor '", name, "' registered after the first iteration"));
    }
    if (param == nullptr) throw Error(StrCat("tensor '", name, "': null parameters"));
    layout_.Add(name, count);
    registered_.push_back(param);
  }

  void Broadcast();
  void Fetch();
  void Checkpoint(const std::string& path);
  void Resume(const std::string& path);
  int PushPull(const std::string& name, const float* grad, float* param, int priority);
  void Wait(int handle);
  void WaitAll() {
    while (!handles_.empty()) Wait(handles_.begin()->first);
  }
  void BeginIteration(int batch_size);
  void EndIteration();
  void UseTasks(int64_t tasks_per_worker, int64_t task_limit) {
    if (broadcast_done_) throw Error("UseTasks after the first iteration");
    tasks_ = std::make_unique<TaskSource>(node_, app_id_, tasks_per_worker, task_limit);
  }
  std::optional<Task> NextTask();
  // GradientSync::EmulateCompute.
  void EmulateCompute(double ms);

  int64_t clock() const { return clock_; }
  void set_weight(double weight) {
    if (tasks_) throw Error("set_weight with tasks: the tasks computed set the weight");
    if (!(weight > 0)) throw Error(StrCat("a worker's weight must be positive, not ", weight));
    weight_ = weight;
  }
  double weight() const { return weight_; }
  void AllowBatchSizes(const std::vector<int>& sizes) {
    if (!batches_) throw Error(StrCat("AllowBatchSizes on app ", app_id_, ": only app 0's model"));
    batches_->Allow(sizes);
  }
  int batch_size(int fallback) const {
    return batches_ && batches_->current().batch_size > 0 ? batches_->current().batch_size
                                                          : fallback;
  }
  void ReportAccuracy(double accuracy) {
    if (!(accuracy >= 0 && accuracy <= 1)) {
      throw Error(StrCat("ReportAccuracy(", accuracy, "): an accuracy is between 0 and 1"));
    }
    accuracy_ = accuracy;
  }
  const IterationStats& last_iteration() const { return last_; }

 private:
  struct Handle {
    std::string tensor;
    std::vector<int> units;
  };

  const TensorLayout::Unit& unit(int u) const { return layout_.units()[u]; }
  // The parts this worker has (null where it has not), in the order the loop calls them.
  std::array<IterationPart*, 3> parts() const {
    return {relay_.get(), batches_.get(), tasks_.get()};
  }
  // Before the first request: every unit's staging.
  void PrepareRequests();
  // Worker 0's part of Checkpoint: every key's whole state, from the servers.
  std::vector<std::pair<Key, std::vector<uint8_t>>> PullKeyStates();
  // Worker 0's part of Resume: the servers install the file's records.
  void RestoreServers(const std::string& path);
  // The product of the --inject compute slowdowns that apply to this worker now.
  double ComputeMultiplier() const;
  // --inject=worker:N:compute=Mx: the compute since the last mark takes M times as long.
  void InjectComputeSlowdown();
  // The first PushPull of an iteration: with tasks, every one done, and the weight they make.
  void StartPushing(const std::string& name);
  void PullEverything(detail::Operation op, int64_t clock, const char* what);

  Node& node_;
  const bool measure_norms_;  // --sync=auto: STRN's noise scale needs the gradients' norms
  const int app_id_;
  detail::RoutedClient kv_;
  // The parts beside the loop (IterationPart; the link probe answers the scheduler on its own).
  std::unique_ptr<RelayLink> relay_;
  std::unique_ptr<BatchOrders> batches_;  // STRET's batch tuning, SMS's shrink and skip
  std::unique_ptr<LinkProbe> probe_;      // answers the scheduler's probes of this worker's links
  std::unique_ptr<TaskSource> tasks_;
  double batch_weight_ = 1;  // this iteration's, as planned
  TensorLayout layout_;
  std::vector<float*> registered_;
  KeyRequests requests_;
  std::vector<bool> pushed_;  // per tensor, this iteration
  std::map<int, Handle> handles_;
  int next_handle_ = 0;
  bool broadcast_done_ = false;
  bool in_iteration_ = false;
  bool any_push_ = false;
  int64_t iterations_ = 0;
  int64_t clock_ = 0;
  double weight_ = 1;
  double accuracy_ = -1;  // as last reported, for the next iteration report
  SteadyClock::time_point begin_, last_push_;
  SteadyClock::time_point compute_mark_;  // where the compute not yet slowed down began
  IterationStats current_, last_;
};

}  // namespace pacer
