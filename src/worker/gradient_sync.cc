#include "pacer/gradient_sync.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "pacer/detail/kv_client_core.h"
#include "pacer/error.h"
#include "ps/server/optimizer.h"
#include "ps/session_core.h"
#include "ps/str_cat.h"
#include "worker/checkpoint_file.h"
#include "worker/key_requests.h"
#include "worker/task_source.h"
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
        app_id_(app_id),
        kv_(session, app_id, sizeof(float)),
        layout_(static_cast<size_t>(std::max<int64_t>(session.config().partition_bytes, 4)) /
                sizeof(float)),
        requests_(kv_, layout_, std::max(1, session.config().scheduling_credit)) {}

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
    tasks_ = std::make_unique<TaskSource>(session_.core(), app_id_, tasks_per_worker, task_limit);
  }
  std::optional<Task> NextTask();

  int64_t clock() const { return clock_; }
  void set_weight(double weight) {
    if (tasks_) throw Error("set_weight with tasks: the tasks computed set the weight");
    if (!(weight > 0)) throw Error(StrCat("a worker's weight must be positive, not ", weight));
    weight_ = weight;
  }
  double weight() const { return weight_; }
  const IterationStats& last_iteration() const { return last_; }

 private:
  struct Handle {
    std::string tensor;
    std::vector<int> units;
  };

  const TensorLayout::Unit& unit(int u) const { return layout_.units()[u]; }
  // Before the first request: every unit's staging.
  void PrepareRequests();
  // Worker 0's part of Checkpoint: every key's whole state, from the servers.
  std::vector<std::pair<Key, std::vector<uint8_t>>> PullKeyStates();
  // Worker 0's part of Resume: the servers install the file's records.
  void RestoreServers(const std::string& path);
  // --inject=worker:N:compute=Mx: the compute since the last mark takes M times as long.
  void InjectComputeSlowdown();
  // The first PushPull of an iteration: with tasks, every one done, and the weight they make.
  void StartPushing(const std::string& name);
  void PullEverything(detail::Operation op, int64_t clock, const char* what);
  void Report(const IterationStats& stats);

  Session& session_;
  const int app_id_;
  detail::KVClientCore kv_;
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
  std::unique_ptr<TaskSource> tasks_;
  SteadyClock::time_point begin_, last_push_;
  SteadyClock::time_point compute_mark_;  // where the compute not yet slowed down began
  IterationStats current_, last_;
};

void GradientSync::Impl::PrepareRequests() {
  if (layout_.units().empty()) throw Error("no tensor was registered before the first iteration");
  requests_.Prepare();
  pushed_.assign(layout_.tensors().size(), false);
}

void GradientSync::Impl::Broadcast() {
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
      session_.role_index() == 0 ? detail::Operation::kPushPull : detail::Operation::kPull, 0,
      "broadcast of the initial parameters");
  broadcast_done_ = true;
}

void GradientSync::Impl::Fetch() {
  if (in_iteration_) throw Error(StrCat("Fetch inside iteration ", clock_));
  Broadcast();
  PullEverything(detail::Operation::kPull, clock_, "fetching the parameters");
}

void GradientSync::Impl::Checkpoint(const std::string& path) {
  if (in_iteration_) throw Error(StrCat("Checkpoint inside iteration ", clock_));
  Broadcast();
  session_.Barrier(kWorkerGroup);  // no worker has pushed clock_, every one pushed the ones before
  std::string error;
  if (session_.role_index() == 0) {
    CheckpointFile file;
    file.clock = clock_;
    file.optimizer = session_.config().optimizer;
    for (const TensorLayout::Tensor& t : layout_.tensors()) {
      file.tensors.emplace_back(t.name, t.count);
    }
    try {
      file.records = PullKeyStates();
      file.Write(path);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  session_.Barrier(kWorkerGroup);  // the state is saved before anyone pushes clock_
  if (!error.empty()) throw Error(StrCat("checkpoint at clock ", clock_, ": ", error));
}

std::vector<std::pair<Key, std::vector<uint8_t>>> GradientSync::Impl::PullKeyStates() {
  std::vector<Key> keys;
  for (const TensorLayout::Unit& u : layout_.units()) keys.push_back(u.key);
  std::vector<uint8_t> bytes;
  std::vector<int32_t> lens;
  detail::Request request{detail::Operation::kPull,
                          Buffer(keys.data(), keys.size() * sizeof(Key)),
                          {},
                          {},
                          {},
                          nullptr,
                          0,
                          {}};
  request.sync.clock = clock_;
  request.sync.state = true;
  request.destination.values = [&](size_t n) {
    bytes.resize(n);
    return bytes.data();
  };
  request.destination.lengths = [&](size_t n) {
    lens.resize(n);
    return lens.data();
  };
  kv_.Wait(kv_.Submit(std::move(request)));
  std::vector<std::pair<Key, std::vector<uint8_t>>> states;
  size_t offset = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const size_t n = static_cast<size_t>(lens[i]) * sizeof(float);
    states.emplace_back(keys[i],
                        std::vector<uint8_t>(bytes.begin() + offset, bytes.begin() + offset + n));
    offset += n;
  }
  return states;
}

void GradientSync::Impl::RestoreServers(const std::string& path) {
  const CheckpointFile file = CheckpointFile::Read(path);
  const std::vector<TensorLayout::Tensor>& tensors = layout_.tensors();
  for (size_t t = 0; t < std::max(tensors.size(), file.tensors.size()); ++t) {
    const std::string saved = t < file.tensors.size() ? StrCat("'", file.tensors[t].first, "' of ",
                                                               file.tensors[t].second, " values")
                                                      : "nothing";
    const std::string registered =
        t < tensors.size() ? StrCat("'", tensors[t].name, "' of ", tensors[t].count, " values")
                           : "nothing";
    if (saved != registered) {
      throw Error(StrCat("checkpoint ", path, " holds ", saved, " as tensor ", t,
                         "; this job registered ", registered));
    }
  }
  if (OptimizerSpec::Parse(file.optimizer).kind !=
      OptimizerSpec::Parse(session_.config().optimizer).kind) {
    throw Error(StrCat("checkpoint ", path, " holds the state of --optimizer=", file.optimizer,
                       "; this job runs --optimizer=", session_.config().optimizer));
  }
  std::vector<Key> keys;
  std::vector<int32_t> lens;
  std::vector<uint8_t> bytes;
  for (size_t u = 0; u < file.records.size(); ++u) {
    const auto& [key, record] = file.records[u];
    if (u >= layout_.units().size() || key != unit(static_cast<int>(u)).key ||
        record.size() % sizeof(float) != 0) {
      throw Error(StrCat("checkpoint ", path, ": record ", u, " is of key ", key, " (",
                         record.size(), " bytes); this job's tensors make ", layout_.units().size(),
                         " keys (another --partition_bytes?)"));
    }
    keys.push_back(key);
    lens.push_back(static_cast<int32_t>(record.size() / sizeof(float)));
    bytes.insert(bytes.end(), record.begin(), record.end());
  }
  if (keys.size() != layout_.units().size()) {
    throw Error(StrCat("checkpoint ", path, " holds ", keys.size(),
                       " keys; this job's tensors make ", layout_.units().size(),
                       " (another --partition_bytes?)"));
  }
  detail::Request request{detail::Operation::kPush,
                          Buffer::FromVector(std::move(keys)),
                          Buffer::FromVector(std::move(bytes)),
                          Buffer::FromVector(std::move(lens)),
                          {},
                          nullptr,
                          0,
                          {}};
  request.sync.clock = file.clock;
  request.sync.init = true;
  request.sync.state = true;
  kv_.Wait(kv_.Submit(std::move(request)));
}

void GradientSync::Impl::Resume(const std::string& path) {
  if (broadcast_done_) throw Error(StrCat("Resume from ", path, " after the first iteration"));
  PrepareRequests();
  if (session_.role_index() == 0) RestoreServers(path);
  // Pulls wait for a key's values: the others' too, until worker 0's records are in.
  PullEverything(detail::Operation::kPull, 0, "resuming from a checkpoint");
  int64_t clock = -1;
  for (size_t u = 0; u < requests_.size(); ++u) {
    const int64_t complete = requests_.state(static_cast<int>(u)).answer->complete_clock;
    clock = clock < 0 ? complete : std::min(clock, complete);
  }
  clock_ = std::max<int64_t>(0, clock);
  broadcast_done_ = true;
}

// One request per key into the staging buffers, then each member's values into its registered
// tensor. Throws Error naming `what` if any request failed.
void GradientSync::Impl::PullEverything(detail::Operation op, int64_t clock, const char* what) {
  const bool init = op == detail::Operation::kPushPull;
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
    if (error.empty()) error = requests_.state(static_cast<int>(u)).error;
  }
  if (!error.empty()) throw Error(StrCat(what, " failed: ", error));
}

void GradientSync::Impl::InjectComputeSlowdown() {
  const SessionCore& core = session_.core();
  const double multiplier = straggler::ActiveMultiplier(
      core.faults(), straggler::FaultSpec::Target::kWorker, straggler::FaultSpec::Effect::kCompute,
      session_.role_index(), clock_, core.SecondsSinceStart(),
      static_cast<uint64_t>(core.config().inject_seed));
  if (multiplier > 1) {
    std::this_thread::sleep_for((multiplier - 1) * (SteadyClock::now() - compute_mark_));
  }
}

std::optional<Task> GradientSync::Impl::NextTask() {
  if (!tasks_) throw Error("NextTask without tasks: call UseTasks before the first iteration");
  if (!in_iteration_) throw Error("NextTask outside an iteration: call BeginIteration");
  if (any_push_) throw Error(StrCat("NextTask after a PushPull in iteration ", clock_));
  InjectComputeSlowdown();  // the previous task's compute
  const double previous_s = Seconds(compute_mark_);
  std::optional<Task> task = tasks_->Next(previous_s);
  compute_mark_ = SteadyClock::now();
  return task;
}

void GradientSync::Impl::StartPushing(const std::string& name) {
  InjectComputeSlowdown();
  if (!tasks_) return;
  if (!tasks_->exhausted()) {
    throw Error(StrCat("PushPull of '", name, "' in iteration ", clock_,
                       " while tasks are left: call NextTask until it returns none"));
  }
  const double weight =
      static_cast<double>(tasks_->computed()) / static_cast<double>(tasks_->tasks_per_worker());
  requests_.set_weight(weight);
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
  requests_.StartIteration(clock_, weight_);
  if (tasks_) tasks_->Begin(clock_);
  current_ = IterationStats();
  current_.iteration = iterations_;
  current_.clock = clock_;
  current_.batch_size = batch_size;
  current_.start_s = session_.core().SecondsSinceStart();
  begin_ = last_push_ = compute_mark_ = SteadyClock::now();
  any_push_ = false;
}

int GradientSync::Impl::PushPull(const std::string& name, const float* grad, float* param,
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
      session_.reducer().Sum(Span<const ConstArray>(&in, 1), {out, DType::kF32}, member.count,
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

void GradientSync::Impl::Wait(int id) {
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
    throw Error(s.error);
  }
}

void GradientSync::Impl::EndIteration() {
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
  if (tasks_) {
    current_.tasks = tasks_->computed();
    current_.tasks_transferred = tasks_->transferred();
    current_.task_share = tasks_->share();
    current_.task_wait_s = tasks_->wait_s();
  }
  current_.total_s = Seconds(begin_);
  current_.version = std::max<int64_t>(0, version);
  const KeyRequests::Traffic& traffic = requests_.traffic();
  current_.bytes_out = traffic.bytes_out;
  current_.bytes_in = traffic.bytes_in;
  if (traffic.any_push_sent) {
    using Duration = std::chrono::duration<double>;
    current_.push_s =
        std::max(0.0, Duration(traffic.last_push_acked - traffic.first_push_sent).count());
    current_.pull_s =
        std::max(0.0, Duration(traffic.last_pull_done - traffic.last_push_acked).count());
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
void GradientSync::Checkpoint(const std::string& path) { impl_->Checkpoint(path); }
void GradientSync::Resume(const std::string& path) { impl_->Resume(path); }
int GradientSync::PushPull(const std::string& name, const float* grad, float* param, int priority) {
  return impl_->PushPull(name, grad, param, priority);
}
void GradientSync::Wait(int handle) { impl_->Wait(handle); }
void GradientSync::WaitAll() { impl_->WaitAll(); }
void GradientSync::BeginIteration(int batch_size) { impl_->BeginIteration(batch_size); }
void GradientSync::EndIteration() { impl_->EndIteration(); }
void GradientSync::UseTasks(int64_t tasks_per_worker, int64_t task_limit) {
  impl_->UseTasks(tasks_per_worker, task_limit);
}
std::optional<Task> GradientSync::NextTask() { return impl_->NextTask(); }
int64_t GradientSync::clock() const { return impl_->clock(); }
void GradientSync::set_weight(double weight) { impl_->set_weight(weight); }
double GradientSync::weight() const { return impl_->weight(); }
const IterationStats& GradientSync::last_iteration() const { return impl_->last_iteration(); }

}  // namespace pacer
