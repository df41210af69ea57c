#include "worker/worker_iterations.h"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "ps/node/node.h"

namespace pacer {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Seconds(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

}  // namespace

void WorkerIterations::PrepareRequests() {
  if (layout_.units().empty()) throw Error("no tensor was registered before the first iteration");
  requests_.Prepare();
  pushed_.assign(layout_.tensors().size(), false);
}

void WorkerIterations::Broadcast() {
  if (broadcast_done_) return;
  PrepareRequests();
  for (size_t u = 0; u < requests_.size(); ++u) {
    KeyRequests::KeyState& s = requests_.state(static_cast<int>(u));
    for (const TensorLayout::Member& member : unit(static_cast<int>(u)).members) {
      const float* param = registered_[member.tensor] + member.tensor_offset;
      std::memcpy(s.send_stage.data() + member.unit_offset, param, member.count * sizeof(float));
    }
  }
  // Worker 0's values become the servers' first; every worker (worker 0 too) receives them.
  PullEverything(
      node_.cluster().role_index() == 0 ? detail::Operation::kPushPull : detail::Operation::kPull,
      0, "broadcast of the initial parameters");
  broadcast_done_ = true;
}

void WorkerIterations::Fetch() {
  if (in_iteration_) throw Error(StrCat("Fetch inside iteration ", clock_));
  Broadcast();
  PullEverything(detail::Operation::kPull, clock_, "fetching the parameters");
}

// One request per key into the staging buffers, then each member's values into its registered
// tensor. Throws Error naming `what` if any request failed.
void WorkerIterations::PullEverything(detail::Operation op, int64_t clock, const char* what) {
  const bool init = op == detail::Operation::kPushPull;
  requests_.ForgetRelays();
  for (size_t u = 0; u < requests_.size(); ++u) {
    KeyRequests::KeyState& s = requests_.state(static_cast<int>(u));
    const TensorLayout::Unit& layout_unit = unit(static_cast<int>(u));
    for (size_t m = 0; m < layout_unit.members.size(); ++m) {
      const TensorLayout::Member& member = layout_unit.members[m];
      s.member_params[m] = registered_[member.tensor] + member.tensor_offset;
    }
    s.send = s.send_stage.data();
    s.receive = s.receive_stage.data();
    s.error.clear();
    s.pull_ts = requests_.Send(static_cast<int>(u), op, clock, init, false);
    s.pulling = true;
  }
  std::string error;
  for (size_t u = 0; u < requests_.size(); ++u) {
    requests_.FinishPull(static_cast<int>(u));
    const KeyRequests::KeyState& s = requests_.state(static_cast<int>(u));
    if (s.lost) throw LostRankError(StrCat(what, " failed: ", s.error));
    if (error.empty()) error = s.error;
  }
  if (!error.empty()) throw Error(StrCat(what, " failed: ", error));
}

double WorkerIterations::ComputeMultiplier() const {
  return ActiveMultiplier(node_.settings().faults, FaultSpec::Target::kWorker,
                          FaultSpec::Effect::kCompute, node_.cluster().role_index(), clock_,
                          node_.cluster().SecondsSinceStart(),
                          static_cast<uint64_t>(node_.config().inject_seed));
}

void WorkerIterations::InjectComputeSlowdown() {
  const double multiplier = ComputeMultiplier();
  if (multiplier > 1) {
    std::this_thread::sleep_for((multiplier - 1) * (SteadyClock::now() - compute_mark_));
  }
}

void WorkerIterations::EmulateCompute(double ms) {
  if (!in_iteration_) throw Error("EmulateCompute outside an iteration: call BeginIteration");
  if (!(ms >= 0)) throw Error(StrCat("EmulateCompute of ", ms, " ms: expected 0 or more"));
  // The kernel may wake a sleeper up to its timer slack late (50 us by default), once per task.
  [[maybe_unused]] static thread_local const bool tight = prctl(PR_SET_TIMERSLACK, 1000UL) == 0;
  std::this_thread::sleep_until(
      compute_mark_ + std::chrono::duration_cast<SteadyClock::duration>(
                          std::chrono::duration<double, std::milli>(ms * ComputeMultiplier())));
  compute_mark_ = SteadyClock::now();  // slowed already: --inject adds nothing to it
}

std::optional<Task> WorkerIterations::NextTask() {
  if (!tasks_) throw Error("NextTask without tasks: call UseTasks before the first iteration");
  if (!in_iteration_) throw Error("NextTask outside an iteration: call BeginIteration");
  if (any_push_) throw Error(StrCat("NextTask after a PushPull in iteration ", clock_));
  InjectComputeSlowdown();  // the previous task's compute
  const double previous_s = Seconds(compute_mark_);
  std::optional<Task> task = tasks_->Next(previous_s);
  compute_mark_ = SteadyClock::now();
  return task;
}

void WorkerIterations::StartPushing(const std::string& name) {
  InjectComputeSlowdown();
  if (!tasks_) return;
  if (!tasks_->exhausted()) {
    throw Error(StrCat("PushPull of '", name, "' in iteration ", clock_,
                       " while tasks are left: call NextTask until it returns none"));
  }
  const double weight =
      static_cast<double>(tasks_->computed()) / static_cast<double>(tasks_->tasks_per_worker());
  requests_.set_weight(weight * batch_weight_);
}

void WorkerIterations::BeginIteration(int batch_size) {
  if (in_iteration_) throw Error(StrCat("BeginIteration twice in iteration ", clock_));
  Broadcast();
  in_iteration_ = true;
  std::fill(pushed_.begin(), pushed_.end(), false);
  IterationPlan plan;
  for (IterationPart* part : parts()) {
    if (part) part->Begin(clock_, plan);
  }
  batch_weight_ = plan.weight;
  requests_.StartIteration(clock_, weight_ * batch_weight_, plan.skip_unchanged);
  current_ = IterationStats();
  current_.iteration = iterations_;
  current_.clock = clock_;
  current_.batch_size = this->batch_size(batch_size);  // the tuned size, where it is
  current_.start_s = node_.cluster().SecondsSinceStart();
  begin_ = last_push_ = compute_mark_ = SteadyClock::now();
  any_push_ = false;
}

int WorkerIterations::PushPull(const std::string& name, const float* grad, float* param,
                               int priority) {
  if (!in_iteration_) {
    throw Error(StrCat("PushPull of '", name, "' outside an iteration: call BeginIteration"));
  }
  const int t = layout_.Find(name);
  if (!any_push_) StartPushing(name);
  if (grad == nullptr || param == nullptr) {
    throw Error(StrCat("PushPull of '", name, "': null gradient or parameters"));
  }
  if (pushed_[t]) throw Error(StrCat("tensor '", name, "' pushed twice in iteration ", clock_));
  pushed_[t] = true;
  if (measure_norms_) {
    const float* end = grad + layout_.tensors()[t].count;
    for (const float* g = grad; g < end; ++g) current_.gradient_norm2 += double{*g} * *g;
  }
  Handle handle{name, layout_.tensors()[t].units};
  for (int u : handle.units) {
    KeyRequests::KeyState& s = requests_.state(u);
    const TensorLayout::Unit& layout_unit = unit(u);
    size_t m = 0;
    while (layout_unit.members[m].tensor != t) ++m;
    const TensorLayout::Member& member = layout_unit.members[m];
    const float* g = grad + member.tensor_offset;
    if (layout_unit.members.size() == 1) {
      s.receive = param + member.tensor_offset;  // straight into place
      s.send = g;
    } else {
      s.receive = s.receive_stage.data();
      s.send = s.send_stage.data();
      s.member_params[m] = param + member.tensor_offset;
    }
    if (requests_.weight() != 1 || layout_unit.members.size() > 1) {  // stage, scaled
      float* out = s.send_stage.data() + member.unit_offset;
      const ConstArray in{g, DType::kF32};
      node_.reducer().Sum(Span<const ConstArray>(&in, 1), {out, DType::kF32}, member.count,
                          static_cast<float>(requests_.weight()));
      s.send = s.send_stage.data();
    }
    if (++s.pushed_members == static_cast<int>(layout_unit.members.size())) {
      requests_.Queue(u, priority);
    }
  }
  requests_.ReleasePushes(false);
  requests_.Pump();
  last_push_ = SteadyClock::now();
  any_push_ = true;
  const int id = next_handle_++;
  handles_[id] = std::move(handle);
  return id;
}

void WorkerIterations::Wait(int id) {
  auto it = handles_.find(id);
  if (it == handles_.end()) throw Error(StrCat("no PushPull with handle ", id, " is pending"));
  const Handle handle = std::move(it->second);
  handles_.erase(it);
  const auto start = SteadyClock::now();
  for (int u : handle.units) {
    const KeyRequests::KeyState& s = requests_.state(u);
    if (!s.queued && !s.pulling && !s.done) {
      std::string missing;
      for (const TensorLayout::Member& m : unit(u).members) {
        if (!pushed_[m.tensor])
          missing += (missing.empty() ? "'" : ", '") + layout_.tensors()[m.tensor].name + "'";
      }
      throw Error(StrCat("tensor '", handle.tensor, "' shares a key with ", missing,
                         ", not pushed yet in iteration ", clock_, ": push them before waiting"));
    }
    requests_.WaitUnit(u);
  }
  current_.wait_s += Seconds(start);
  for (int u : handle.units) {
    const KeyRequests::KeyState& s = requests_.state(u);
    if (s.error.empty()) continue;
    if (s.timed_out) throw TimeoutError(s.error);
    if (s.lost) throw LostRankError(s.error);
    throw Error(s.error);
  }
}

void WorkerIterations::EndIteration() {
  if (!in_iteration_) throw Error(StrCat("EndIteration outside an iteration (clock ", clock_, ")"));
  for (size_t u = 0; u < requests_.size(); ++u) {
    const int members = static_cast<int>(unit(static_cast<int>(u)).members.size());
    const int pushed = requests_.state(static_cast<int>(u)).pushed_members;
    if (pushed > 0 && pushed < members) {
      std::string missing;
      for (const TensorLayout::Member& m : unit(static_cast<int>(u)).members) {
        if (!pushed_[m.tensor]) missing += " '" + layout_.tensors()[m.tensor].name + "'";
      }
      in_iteration_ = false;
      handles_.clear();
      throw Error(StrCat("iteration ", clock_, " ended without pushing", missing,
                         ", which share a key with tensors it pushed"));
    }
  }
  const double compute_s = std::chrono::duration<double>(last_push_ - begin_).count();
  in_iteration_ = false;
  WaitAll();
  // The servers may be ahead: a backup worker whose gradients came too late jumps to their clock.
  int64_t next = clock_ + 1;
  int64_t version = -1;
  for (size_t u = 0; u < requests_.size(); ++u) {
    const KeyRequests::KeyState& s = requests_.state(static_cast<int>(u));
    if (!s.done || !s.answer) continue;
    next = std::max(next, s.answer->complete_clock);
    version = version < 0 ? s.version : std::min(version, s.version);
  }
  current_.compute_s = any_push_ ? compute_s : Seconds(begin_);
  current_.total_s = Seconds(begin_);
  current_.version = std::max<int64_t>(0, version);
  const KeyRequests::Traffic& traffic = requests_.traffic();
  current_.bytes_out = traffic.bytes_out;
  current_.bytes_in = traffic.bytes_in;
  current_.pushes_skipped = traffic.pushes_skipped;
  current_.bytes_skipped = traffic.bytes_skipped;
  current_.pulls_unchanged = traffic.pulls_unchanged;
  if (traffic.any_push_sent) {
    using Duration = std::chrono::duration<double>;
    current_.push_s =
        std::max(0.0, Duration(traffic.last_push_acked - traffic.first_push_sent).count());
    current_.pull_s =
        std::max(0.0, Duration(traffic.last_pull_done - traffic.last_push_acked).count());
  }
  IterationReport report;
  static_cast<IterationStats&>(report) = current_;
  for (IterationPart* part : parts()) {
    if (part) part->End(report);
  }
  report.accuracy = accuracy_;
  accuracy_ = -1;
  last_ = report;
  clock_ = next;
  ++iterations_;
  node_.Report(report);
}

}  // namespace pacer
