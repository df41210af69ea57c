#include "pacer/gradient_sync.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "pacer/detail/kv_client_core.h"
#include "pacer/error.h"
#include "ps/session_core.h"
#include "ps/str_cat.h"
#include "worker/tensor_layout.h"

namespace pacer {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Seconds(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

}  // namespace

class GradientSync::Impl {
 public:
  Impl(Session& session, int app_id)
      : session_(session),
        kv_(session, app_id, sizeof(float)),
        layout_(static_cast<size_t>(std::max<int64_t>(session.config().partition_bytes, 4)) /
                sizeof(float)),
        credit_(std::max(1, session.config().scheduling_credit)) {}

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
  int PushPull(const std::string& name, const float* grad, float* param, int priority);
  void Wait(int handle);
  void WaitAll() {
    while (!handles_.empty()) Wait(handles_.begin()->first);
  }
  void BeginIteration(int batch_size);
  void EndIteration();

  int64_t clock() const { return clock_; }
  void set_weight(double weight) {
    if (!(weight > 0)) throw Error(StrCat("a worker's weight must be positive, not ", weight));
    weight_ = weight;
  }
  double weight() const { return weight_; }
  const IterationStats& last_iteration() const { return last_; }

 private:
  // One key's requests of the current iteration: a push, limited by credit and ordered by
  // priority, and a pull that the server answers once the rule allows the next iteration. Credit
  // holds pushes only: a push completes without waiting for other workers, so workers that order
  // their keys differently cannot block each other.
  struct UnitState {
    int pushed_members = 0;
    bool queued = false, pushing = false, pulling = false, done = false;
    int priority = 0;
    uint64_t order = 0;  // when it was queued, then when its push was sent
    int push_ts = -1, pull_ts = -1;
    const float* send = nullptr;    // the gradient (as given, or staged)
    float* receive = nullptr;       // where the parameters land (the caller's, or staged)
    std::vector<float> send_stage;  // groups, and weighted gradients
    std::vector<float> receive_stage;
    std::vector<float*> member_params;  // groups: where each member's parameters go
    std::shared_ptr<ResponseStamp> answer;
    std::string error;
    bool timed_out = false;
    // Kept across iterations: the version the next gradient is computed on.
    int64_t version = 0;
  };
  struct Handle {
    std::string tensor;
    std::vector<int> units;
  };

  const TensorLayout::Unit& unit(int u) const { return layout_.units()[u]; }
  int Send(int u, detail::Operation op, int64_t clock, bool init, bool after_own_push);
  // Waits for request `ts` of unit u, recording a failure in the unit.
  void Await(int u, int ts);
  bool AnyQueued() const;
  // Sends queued pushes, highest priority first, while credit lasts.
  void Pump();
  // Releases the credit of finished pushes; with `block`, waits for the oldest one first.
  void ReleasePushes(bool block);
  void FinishPull(int u);
  void WaitUnit(int u);
  void InjectComputeSlowdown();
  void PullEverything(detail::Operation op, int64_t clock, const char* what);
  void Report(const IterationStats& stats);

  Session& session_;
  detail::KVClientCore kv_;
  TensorLayout layout_;
  std::vector<float*> registered_;
  std::vector<Key> keys_;  // keys_[u] == u, viewed by requests
  std::vector<UnitState> units_;
  std::vector<bool> pushed_;  // per tensor, this iteration
  const int credit_;
  int pushes_inflight_ = 0;
  uint64_t next_order_ = 0;
  std::map<int, Handle> handles_;
  int next_handle_ = 0;
  bool broadcast_done_ = false;
  bool in_iteration_ = false;
  bool any_push_ = false;
  bool any_push_sent_ = false;
  int64_t iterations_ = 0;
  SteadyClock::time_point first_push_sent_, last_push_acked_, last_pull_done_;
  int64_t clock_ = 0;
  double weight_ = 1;
  SteadyClock::time_point begin_, last_push_;
  IterationStats current_, last_;
};

int GradientSync::Impl::Send(int u, detail::Operation op, int64_t clock, bool init,
                             bool after_own_push) {
  UnitState& s = units_[u];
  const size_t bytes = unit(u).count * sizeof(float);
  detail::Request request{op, Buffer(&keys_[u], sizeof(Key)), {}, {}, {}, nullptr, 0, {}};
  request.sync = {clock, s.version, weight_, init, after_own_push, nullptr};
  if (op != detail::Operation::kPull) {
    request.values = Buffer(s.send, bytes);
    current_.bytes_out += static_cast<int64_t>(bytes);
  }
  if (op != detail::Operation::kPush) {
    float* receive = s.receive;
    request.destination.values = [receive, bytes](size_t got) {
      return got == bytes ? reinterpret_cast<uint8_t*>(receive) : nullptr;
    };
    s.answer = request.sync.answer = std::make_shared<ResponseStamp>();
  }
  return kv_.Submit(std::move(request));
}

void GradientSync::Impl::Await(int u, int ts) {
  UnitState& s = units_[u];
  try {
    kv_.Wait(ts);
  } catch (const TimeoutError& e) {
    if (s.error.empty()) s.error = e.what();
    s.timed_out = true;
  } catch (const Error& e) {
    if (s.error.empty()) s.error = e.what();
  }
}

bool GradientSync::Impl::AnyQueued() const {
  for (const UnitState& s : units_) {
    if (s.queued) return true;
  }
  return false;
}

void GradientSync::Impl::Pump() {
  while (pushes_inflight_ < credit_) {
    int best = -1;
    for (size_t u = 0; u < units_.size(); ++u) {
      const UnitState& s = units_[u];
      if (!s.queued) continue;
      if (best < 0 || s.priority > units_[best].priority ||
          (s.priority == units_[best].priority && s.order < units_[best].order)) {
        best = static_cast<int>(u);
      }
    }
    if (best < 0) return;
    UnitState& s = units_[best];
    if (!any_push_sent_) first_push_sent_ = SteadyClock::now();
    any_push_sent_ = true;
    s.push_ts = Send(best, detail::Operation::kPush, clock_, false, false);
    s.pull_ts = Send(best, detail::Operation::kPull, clock_ + 1, false, true);
    s.queued = false;
    s.pushing = s.pulling = true;
    s.order = next_order_++;
    ++pushes_inflight_;
  }
}

void GradientSync::Impl::ReleasePushes(bool block) {
  int oldest = -1;
  for (size_t u = 0; u < units_.size(); ++u) {
    UnitState& s = units_[u];
    if (!s.pushing) continue;
    bool finished = false;
    try {
      finished = kv_.Wait(s.push_ts, std::chrono::milliseconds(0));
    } catch (const Error& e) {
      finished = true;
      if (s.error.empty()) s.error = e.what();
    }
    if (finished) {
      s.pushing = false;
      --pushes_inflight_;
      last_push_acked_ = SteadyClock::now();
      block = false;
    } else if (oldest < 0 || s.order < units_[oldest].order) {
      oldest = static_cast<int>(u);
    }
  }
  if (block && oldest >= 0) {
    Await(oldest, units_[oldest].push_ts);
    units_[oldest].pushing = false;
    --pushes_inflight_;
    last_push_acked_ = SteadyClock::now();
  }
}

void GradientSync::Impl::FinishPull(int u) {
  UnitState& s = units_[u];
  Await(u, s.pull_ts);
  s.pulling = false;
  s.done = true;
  last_pull_done_ = SteadyClock::now();
  if (!s.error.empty()) return;
  current_.bytes_in += static_cast<int64_t>(unit(u).count * sizeof(float));
  s.version = s.answer->version;
  if (s.receive == s.receive_stage.data()) {
    for (size_t m = 0; m < unit(u).members.size(); ++m) {
      const TensorLayout::Member& member = unit(u).members[m];
      if (s.member_params[m] == nullptr) continue;
      std::memcpy(s.member_params[m], s.receive_stage.data() + member.unit_offset,
                  member.count * sizeof(float));
    }
  }
}

// Sends every queued push before blocking on a pull: the pull may wait for other workers' pushes,
// and theirs for nothing, so no worker holds back what another waits for.
void GradientSync::Impl::WaitUnit(int u) {
  for (;;) {
    ReleasePushes(false);
    Pump();
    if (!AnyQueued()) break;
    ReleasePushes(true);
  }
  UnitState& s = units_[u];
  if (s.pushing) {
    Await(u, s.push_ts);
    s.pushing = false;
    --pushes_inflight_;
    last_push_acked_ = SteadyClock::now();
  }
  if (s.pulling && !s.error.empty()) {  // the push failed: the server will not serve the pull
    s.pulling = false;
    s.done = true;
  }
  if (s.pulling) FinishPull(u);
}

void GradientSync::Impl::Broadcast() {
  if (broadcast_done_) return;
  if (layout_.units().empty()) throw Error("no tensor was registered before the first iteration");
  const size_t n = layout_.units().size();
  units_.assign(n, UnitState());
  keys_.resize(n);
  pushed_.assign(layout_.tensors().size(), false);
  for (size_t u = 0; u < n; ++u) {
    keys_[u] = layout_.units()[u].key;
    UnitState& s = units_[u];
    const TensorLayout::Unit& layout_unit = unit(static_cast<int>(u));
    s.send_stage.resize(layout_unit.count);
    s.receive_stage.resize(layout_unit.count);
    s.member_params.assign(layout_unit.members.size(), nullptr);
    for (const TensorLayout::Member& member : layout_unit.members) {
      const float* param = registered_[member.tensor] + member.tensor_offset;
      std::memcpy(s.send_stage.data() + member.unit_offset, param, member.count * sizeof(float));
    }
  }
  // Worker 0's values become the servers' first; every worker (worker 0 too) receives them.
  PullEverything(
      session_.role_index() == 0 ? detail::Operation::kPushPull : detail::Operation::kPull, 0,
      "broadcast of the initial parameters");
  broadcast_done_ = true;
}

void GradientSync::Impl::Fetch() {
  if (in_iteration_) throw Error(StrCat("Fetch inside iteration ", clock_));
  Broadcast();
  PullEverything(detail::Operation::kPull, clock_, "fetching the parameters");
}

// One request per key into the staging buffers, then each member's values into its registered
// tensor. Throws Error naming `what` if any request failed.
void GradientSync::Impl::PullEverything(detail::Operation op, int64_t clock, const char* what) {
  const bool init = op == detail::Operation::kPushPull;
  for (size_t u = 0; u < units_.size(); ++u) {
    UnitState& s = units_[u];
    const TensorLayout::Unit& layout_unit = unit(static_cast<int>(u));
    for (size_t m = 0; m < layout_unit.members.size(); ++m) {
      const TensorLayout::Member& member = layout_unit.members[m];
      s.member_params[m] = registered_[member.tensor] + member.tensor_offset;
    }
    s.send = s.send_stage.data();
    s.receive = s.receive_stage.data();
    s.error.clear();
    s.pull_ts = Send(static_cast<int>(u), op, clock, init, false);
    s.pulling = true;
  }
  std::string error;
  for (size_t u = 0; u < units_.size(); ++u) {
    FinishPull(static_cast<int>(u));
    if (error.empty()) error = units_[u].error;
  }
  if (!error.empty()) throw Error(StrCat(what, " failed: ", error));
}

// --inject=worker:N:compute=Mx: the compute so far (begin to the first PushPull) takes M times
// as long, as if the worker were M times slower.
void GradientSync::Impl::InjectComputeSlowdown() {
  const SessionCore& core = session_.core();
  const int me = session_.role_index();
  double multiplier = 1;
  for (const straggler::FaultSpec& f : core.faults()) {
    if (f.effect == straggler::FaultSpec::Effect::kCompute &&
        f.Names(straggler::FaultSpec::Target::kWorker, me) &&
        f.ActiveAt(clock_, core.SecondsSinceStart(), me,
                   static_cast<uint64_t>(core.config().inject_seed))) {
      multiplier *= f.value;
    }
  }
  if (multiplier > 1) {
    std::this_thread::sleep_for((multiplier - 1) * (SteadyClock::now() - begin_));
  }
}

void GradientSync::Impl::Report(const IterationStats& stats) {
  IterationReport r;
  r.iteration = stats.iteration;
  r.clock = stats.clock;
  r.bytes_out = stats.bytes_out;
  r.bytes_in = stats.bytes_in;
  r.batch = stats.batch_size;
  r.version = stats.version;
  r.start_s = stats.start_s;
  r.compute_s = stats.compute_s;
  r.push_s = stats.push_s;
  r.pull_s = stats.pull_s;
  r.wait_s = stats.wait_s;
  session_.core().Report(r);
}

void GradientSync::Impl::BeginIteration(int batch_size) {
  if (in_iteration_) throw Error(StrCat("BeginIteration twice in iteration ", clock_));
  Broadcast();
  in_iteration_ = true;
  std::fill(pushed_.begin(), pushed_.end(), false);
  for (UnitState& s : units_) {
    s.pushed_members = 0;
    s.done = false;
    s.error.clear();
    s.timed_out = false;
  }
  current_ = IterationStats();
  current_.iteration = iterations_;
  current_.clock = clock_;
  current_.batch_size = batch_size;
  current_.start_s = session_.core().SecondsSinceStart();
  begin_ = last_push_ = SteadyClock::now();
  any_push_ = any_push_sent_ = false;
}

int GradientSync::Impl::PushPull(const std::string& name, const float* grad, float* param,
                                 int priority) {
  if (!in_iteration_) {
    throw Error(StrCat("PushPull of '", name, "' outside an iteration: call BeginIteration"));
  }
  const int t = layout_.Find(name);
  if (!any_push_) InjectComputeSlowdown();
  if (grad == nullptr || param == nullptr) {
    throw Error(StrCat("PushPull of '", name, "': null gradient or parameters"));
  }
  if (pushed_[t]) throw Error(StrCat("tensor '", name, "' pushed twice in iteration ", clock_));
  pushed_[t] = true;
  Handle handle{name, layout_.tensors()[t].units};
  for (int u : handle.units) {
    UnitState& s = units_[u];
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
    if (weight_ != 1 || layout_unit.members.size() > 1) {  // stage, scaled by the weight
      float* out = s.send_stage.data() + member.unit_offset;
      const ConstArray in{g, DType::kF32};
      session_.reducer().Sum(Span<const ConstArray>(&in, 1), {out, DType::kF32}, member.count,
                             static_cast<float>(weight_));
      s.send = s.send_stage.data();
    }
    if (++s.pushed_members == static_cast<int>(layout_unit.members.size())) {
      s.queued = true;
      s.priority = priority;
      s.order = next_order_++;
    }
  }
  ReleasePushes(false);
  Pump();
  last_push_ = SteadyClock::now();
  any_push_ = true;
  const int id = next_handle_++;
  handles_[id] = std::move(handle);
  return id;
}

void GradientSync::Impl::Wait(int id) {
  auto it = handles_.find(id);
  if (it == handles_.end()) throw Error(StrCat("no PushPull with handle ", id, " is pending"));
  const Handle handle = std::move(it->second);
  handles_.erase(it);
  const auto start = SteadyClock::now();
  for (int u : handle.units) {
    const UnitState& s = units_[u];
    if (!s.queued && !s.pulling && !s.done) {
      std::string missing;
      for (const TensorLayout::Member& m : unit(u).members) {
        if (!pushed_[m.tensor])
          missing += (missing.empty() ? "'" : ", '") + layout_.tensors()[m.tensor].name + "'";
      }
      throw Error(StrCat("tensor '", handle.tensor, "' shares a key with ", missing,
                         ", not pushed yet in iteration ", clock_, ": push them before waiting"));
    }
    WaitUnit(u);
  }
  current_.wait_s += Seconds(start);
  for (int u : handle.units) {
    const UnitState& s = units_[u];
    if (s.error.empty()) continue;
    if (s.timed_out) throw TimeoutError(s.error);
    throw Error(s.error);
  }
}

void GradientSync::Impl::EndIteration() {
  if (!in_iteration_) throw Error(StrCat("EndIteration outside an iteration (clock ", clock_, ")"));
  for (size_t u = 0; u < units_.size(); ++u) {
    const int members = static_cast<int>(unit(static_cast<int>(u)).members.size());
    if (units_[u].pushed_members > 0 && units_[u].pushed_members < members) {
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
  for (const UnitState& s : units_) {
    if (!s.done || !s.answer) continue;
    next = std::max(next, s.answer->complete_clock);
    version = version < 0 ? s.version : std::min(version, s.version);
  }
  current_.compute_s = any_push_ ? compute_s : Seconds(begin_);
  current_.total_s = Seconds(begin_);
  current_.version = std::max<int64_t>(0, version);
  if (any_push_sent_) {
    using Duration = std::chrono::duration<double>;
    current_.push_s = std::max(0.0, Duration(last_push_acked_ - first_push_sent_).count());
    current_.pull_s = std::max(0.0, Duration(last_pull_done_ - last_push_acked_).count());
  }
  last_ = current_;
  clock_ = next;
  ++iterations_;
  Report(last_);
}

GradientSync::GradientSync(Session& session, int app_id)
    : impl_(std::make_unique<Impl>(session, app_id)) {}
GradientSync::~GradientSync() = default;
void GradientSync::Register(const std::string& name, float* param, size_t count) {
  impl_->Register(name, param, count);
}
void GradientSync::Broadcast() { impl_->Broadcast(); }
void GradientSync::Fetch() { impl_->Fetch(); }
int GradientSync::PushPull(const std::string& name, const float* grad, float* param, int priority) {
  return impl_->PushPull(name, grad, param, priority);
}
void GradientSync::Wait(int handle) { impl_->Wait(handle); }
void GradientSync::WaitAll() { impl_->WaitAll(); }
void GradientSync::BeginIteration(int batch_size) { impl_->BeginIteration(batch_size); }
void GradientSync::EndIteration() { impl_->EndIteration(); }
int64_t GradientSync::clock() const { return impl_->clock(); }
void GradientSync::set_weight(double weight) { impl_->set_weight(weight); }
double GradientSync::weight() const { return impl_->weight(); }
const IterationStats& GradientSync::last_iteration() const { return impl_->last_iteration(); }

}  // namespace pacer
