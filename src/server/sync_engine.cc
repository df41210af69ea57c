#include "server/sync_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

SyncEngine::SyncEngine(const Options& options, Reducer& reducer, ParameterState::Allocator allocate)
    : num_workers_(options.num_workers),
      optimizer_(options.optimizer),
      reducer_(reducer),
      allocate_(allocate),
      codec_(options.num_workers, std::move(allocate)),
      mode_(options.mode),
      excluded_(std::max(options.num_workers, 0), false) {
  if (num_workers_ < 1) throw Error(StrCat("a job of ", num_workers_, " workers cannot train"));
  CheckMode(mode_);
}

void SyncEngine::CheckMode(const SyncMode& mode) const {
  try {
    mode.CheckFits(num_workers_);
  } catch (const Error& e) {
    throw Error(StrCat("--sync=", e.what()));
  }
}

const KeyState& SyncEngine::Find(Key key, const Gradient& g) const {
  auto it = keys_.find(key);
  if (it == keys_.end() || !it->second.params) {
    throw Error(StrCat("key ", key, " has no values yet: worker ", g.worker, " pushed clock ",
                       g.clock, " before worker 0 registered it (GradientSync::Register)"));
  }
  return it->second;
}

void SyncEngine::Init(Key key, int worker, const float* values, size_t count) {
  KeyState& k = keys_[key];
  if (k.params) {
    throw Error(StrCat("key ", key, " already has its initial values (", k.params->size(),
                       "); worker ", worker, " sent ", count, " more"));
  }
  k.params = std::make_unique<ParameterState>(values, count, allocate_);
  k.last_clock.assign(num_workers_, -1);
  k.arrived.assign(num_workers_, -1);
  k.SetMode(mode_);
  k.switches_done = switches_.size();
  Wake(k);
}

bool SyncEngine::Holds(const KeyState& k, int64_t clock) const {
  if (fence_ && clock >= *fence_) return true;
  return k.switches_done < switches_.size() && clock >= switches_[k.switches_done].first_clock;
}

bool SyncEngine::Ready(const KeyState& k, int64_t clock, int worker) const {
  if (!k.params || Holds(k, clock)) return false;
  if (k.mode.kind == SyncMode::Kind::kGroups) {
    const int group = worker < 0 ? -1 : k.mode.GroupOf(worker);
    if (group < 0) return k.complete >= clock;
    return k.group_complete[static_cast<size_t>(group)] >= clock &&
           k.complete >= clock - k.mode.staleness;
  }
  if (!k.mode.on_arrival()) return k.complete >= clock;
  if (k.mode.bounded_staleness()) return k.complete >= clock - k.mode.staleness;
  return true;
}

void SyncEngine::Check(Key key, const Gradient& g) const {
  const KeyState& k = Find(key, g);
  if (g.worker < 0 || g.worker >= num_workers_) {
    throw Error(StrCat("key ", key, ": a push from worker ", g.worker, " of ", num_workers_));
  }
  if (excluded_[g.worker]) {
    throw Error(StrCat("key ", key, ": a push from worker ", g.worker,
                       ", which the job excluded when it stopped answering"));
  }
  const size_t count = g.values.size() / sizeof(float);
  const bool withheld = g.values.size() == 0 && g.weight == 0 && k.params->size() > 0;
  if (!withheld && (count != k.params->size() || g.values.size() % sizeof(float) != 0)) {
    throw Error(StrCat("key ", key, ": worker ", g.worker, " pushed ", g.values.size(),
                       " bytes, the key holds ", k.params->size(), " floats"));
  }
  if (!(g.weight >= 0) || !std::isfinite(g.weight)) {
    throw Error(StrCat("key ", key, ": worker ", g.worker, " pushed weight ", g.weight,
                       "; weights must be finite and not negative"));
  }
  if (g.clock < 0) {
    throw Error(StrCat("key ", key, ": worker ", g.worker, " pushed clock ", g.clock));
  }
  if (g.version > k.version) {
    throw Error(StrCat("key ", key, ": worker ", g.worker, " computed on version ", g.version,
                       ", but only ", k.version, " updates exist"));
  }
  CheckClock(key, k, g.worker, g.worker, g.clock);
  for (size_t i = 0; i < g.relayed.size(); ++i) {
    const int w = g.relayed[i];
    if (w < 0 || w >= num_workers_ || w == g.worker ||
        std::find(g.relayed.begin(), g.relayed.begin() + i, w) != g.relayed.begin() + i) {
      throw Error(StrCat("key ", key, ": worker ", g.worker, " relayed a gradient of worker ", w,
                         " (of ", num_workers_, "): relayed workers are other workers, once each"));
    }
    if (excluded_[w]) {
      throw Error(StrCat("key ", key, ": worker ", g.worker, " relayed a gradient of worker ", w,
                         ", which the job excluded when it stopped answering"));
    }
    CheckClock(key, k, g.worker, w, g.clock);
    for (const SyncMode* mode : {&k.mode, &mode_}) {
      if (mode->kind == SyncMode::Kind::kGroups && mode->GroupOf(w) != mode->GroupOf(g.worker)) {
        throw Error(StrCat("key ", key, ": worker ", g.worker, " relayed a gradient of worker ", w,
                           ", which is in another group of ", mode->ToString()));
      }
    }
  }
}

void SyncEngine::CheckClock(Key key, const KeyState& k, int pusher, int worker,
                            int64_t clock) const {
  const int64_t last = k.arrived[worker];
  if (clock <= last) {
    throw Error(StrCat("key ", key, ": worker ", pusher, " pushed clock ", clock,
                       pusher == worker ? "" : StrCat(" for worker ", worker), " after clock ",
                       last, "; clocks must increase"));
  }
}

void SyncEngine::Push(Key key, const Gradient& g) {
  Check(key, g);
  KeyState& k = keys_.at(key);
  max_clock_seen_ = std::max(max_clock_seen_, g.clock);
  k.arrived[g.worker] = g.clock;
  for (int w : g.relayed) k.arrived[w] = g.clock;
  ++k.pushes;
  if (Holds(k, g.clock)) {
    k.held.push_back(g);
    k.held.back().values = g.values.Owned();  // answered before it is applied
  } else {
    Process(k, g);
  }
  Advance(k);
}

void SyncEngine::Process(KeyState& k, const Gradient& g) {
  k.last_clock[g.worker] = g.clock;
  for (int w : g.relayed) k.last_clock[w] = g.clock;
  if (k.mode.kind == SyncMode::Kind::kGroups) {
    AccumulateInGroup(k, g);
  } else if (k.mode.on_arrival()) {
    ApplyOnArrival(k, g);
  } else {
    Accumulate(k, g);
  }
}

void SyncEngine::Accumulate(KeyState& k, const Gradient& g) {
  const int gradients = 1 + static_cast<int>(g.relayed.size());
  if (g.clock < k.complete) {  // a backup worker's gradient after the first ones were applied
    k.dropped += gradients;
    return;
  }
  Aggregate& a = k.aggregates[g.clock];
  a.count += gradients;
  a.weight += g.weight;
  if (g.values.size() > 0) Add(k, a, g.values);
  ResolveOnceComplete(k);
}

void SyncEngine::Add(const KeyState& k, Aggregate& a, const Buffer& values) {
  const size_t count = k.params->size();
  if (a.summed == 0) {
    a.first = values.Owned();  // kept until the clock completes, after the push is answered
  } else {
    const float* prior = a.summed == 1 ? a.first.as<float>() : a.sum_data;
    if (a.summed == 1) {
      uint8_t* out = nullptr;
      a.sum = allocate_(count * sizeof(float), &out);
      a.sum_data = reinterpret_cast<float*>(out);
    }
    const ConstArray inputs[2] = {{prior, DType::kF32}, {values.data(), DType::kF32}};
    reducer_.Sum(Span<const ConstArray>(inputs, 2), {a.sum_data, DType::kF32}, count);
    a.first = Buffer();  // summed: release the message
  }
  ++a.summed;
}

int SyncEngine::Needed(const KeyState& k, int64_t clock) const {
  // An excluded worker's push counts where it came before the exclusion: the clock's sum has it.
  int expected = num_workers_;
  if (any_excluded_) {
    expected = 0;
    for (int w = 0; w < num_workers_; ++w) expected += !excluded_[w] || k.arrived[w] >= clock;
  }
  const int backups = k.mode.kind == SyncMode::Kind::kBackup ? k.mode.backups : 0;
  return std::min(num_workers_ - backups, expected);
}

void SyncEngine::ResolveOnceComplete(KeyState& k) {
  for (auto it = k.aggregates.begin(); it != k.aggregates.end() && it->first == k.complete &&
                                       it->second.count >= Needed(k, it->first);
       it = k.aggregates.erase(it)) {
    const Aggregate& done = it->second;
    // Every worker may have weight 0 (none computed a task of the clock): nothing to apply.
    if (done.weight > 0) {
      Update(k, done.summed == 1 ? done.first.as<float>() : done.sum_data, 1.0 / done.weight,
             it->first);
    }
    k.applied += done.count;
    ++k.complete;
  }
}

void SyncEngine::ResolveOnArrivalComplete(KeyState& k) {
  int64_t slowest = std::numeric_limits<int64_t>::max();
  for (int w = 0; w < num_workers_; ++w) {
    if (!excluded_[w]) slowest = std::min(slowest, k.last_clock[w]);
  }
  if (slowest != std::numeric_limits<int64_t>::max()) k.complete = slowest + 1;
}

void SyncEngine::Exclude(int worker) {
  if (worker <= 0 || worker >= num_workers_) {
    throw Error(StrCat("cannot exclude worker ", worker, " of ", num_workers_,
                       " (worker 0 holds the job's first values and outputs)"));
  }
  excluded_[worker] = true;
  any_excluded_ = true;
  for (auto& [key, k] : keys_) {
    if (!k.params) continue;
    if (k.mode.kind == SyncMode::Kind::kGroups) {
      ResolveGroups(k);
    } else if (k.mode.on_arrival()) {
      ResolveOnArrivalComplete(k);
    } else {
      ResolveOnceComplete(k);
    }
    Advance(k);
  }
}

void SyncEngine::ApplyOnArrival(KeyState& k, const Gradient& g) {
  double factor = 1;
  if (k.mode.kind == SyncMode::Kind::kDynSgd) {
    factor = 1.0 / static_cast<double>(k.version - g.version + 1);
  } else if (k.mode.kind == SyncMode::Kind::kConSgd) {
    factor = k.mode.scale > 0 ? k.mode.scale : 1.0 / num_workers_;
  } else if (k.mode.kind == SyncMode::Kind::kEpsp) {
    // A clock's pushes together make BSP's update (the weights sum to num_workers), each applied
    // as it comes: BSP's statistics without its barrier.
    factor = 1.0 / num_workers_;
  }
  // The values are weight x the gradient: a push that stands for more of the iteration's samples
  // (a worker that computed more tasks) moves the parameters further.
  if (g.weight > 0) Update(k, g.values.as<float>(), factor, g.clock);
  k.applied += 1 + static_cast<int64_t>(g.relayed.size());
  ResolveOnArrivalComplete(k);
}

void SyncEngine::Update(KeyState& k, const float* grad, double grad_scale, int64_t clock) {
  k.params->Apply(optimizer_, reducer_, grad, static_cast<float>(grad_scale), allocate_,
                  optimizer_.LearningRateScale(clock));
  ++k.version;
}

void SyncEngine::Advance(KeyState& k) {
  for (bool progressed = true; progressed;) {
    while (k.switches_done < switches_.size() &&
           k.complete >= switches_[k.switches_done].first_clock) {
      k.SetMode(switches_[k.switches_done++].mode);
    }
    // Replays what is no longer held (a switch happened, or a prepared switch was committed at a
    // later clock); processing it may resolve a clock and reach the next switch.
    progressed = false;
    std::vector<Gradient> held;
    held.swap(k.held);
    for (const Gradient& g : held) {
      if (Holds(k, g.clock)) {
        k.held.push_back(g);
      } else {
        Process(k, g);
        progressed = true;
      }
    }
  }
  Wake(k);
}

void SyncEngine::Pull(std::vector<Key> keys, int64_t clock, std::function<void()> serve, int worker,
                      bool after_own_push, std::function<void()> redirect) {
  if (worker >= num_workers_ || (after_own_push && worker < 0)) {
    throw Error(StrCat("a pull from worker ", worker, " of ", num_workers_));
  }
  Wait(std::make_shared<WaitingPull>(WaitingPull{std::move(keys), clock, std::move(serve), worker,
                                                 after_own_push, std::move(redirect)}));
}

void SyncEngine::Wait(const std::shared_ptr<WaitingPull>& pull) {
  if (pull->cancelled) return;  // a key moved away: the pull was redirected
  for (Key key : pull->keys) {
    KeyState& k = keys_[key];
    const bool own_push_missing =
        pull->after_own_push && k.params && k.arrived[pull->worker] < pull->clock - 1;
    if (own_push_missing || !Ready(k, pull->clock, pull->worker)) {
      k.waiters.push_back(pull);
      return;
    }
  }
  pull->serve();
}

void SyncEngine::Wake(KeyState& k) {
  if (k.waiters.empty()) return;
  std::vector<std::shared_ptr<WaitingPull>> waiters;
  waiters.swap(k.waiters);
  for (const auto& pull : waiters) Wait(pull);
}

int64_t SyncEngine::PrepareSwitch() {
  fence_ = max_clock_seen_ + 1;
  return *fence_;
}

void SyncEngine::CommitSwitch(const SyncMode& mode, int64_t first_clock) {
  const std::optional<int64_t> fence = fence_;
  fence_.reset();  // a rejected switch must not leave pushes held: the old mode goes on
  try {
    CheckMode(mode);
    if (fence && first_clock < *fence) {
      throw Error(StrCat("a switch to ", mode.ToString(), " from clock ", first_clock,
                         ", but this server has seen clock ", *fence - 1));
    }
    switches_.push_back({mode, first_clock});
    mode_ = mode;
  } catch (const Error&) {
    ReleaseAll();
    throw;
  }
  ReleaseAll();
}

void SyncEngine::ReleaseAll() {
  for (auto& entry : keys_) {
    KeyState& k = entry.second;
    if (k.params) {
      Advance(k);
    } else {
      Wake(k);
    }
  }
}

const Buffer* SyncEngine::Values(Key key) const {
  auto it = keys_.find(key);
  return it == keys_.end() || !it->second.params ? nullptr : &it->second.params->values();
}

KeyStatus SyncEngine::Status(Key key) const {
  KeyStatus s;
  auto it = keys_.find(key);
  if (it == keys_.end()) return s;
  const KeyState& k = it->second;
  s.version = k.version;
  s.complete = k.complete;
  s.applied = k.applied;
  s.dropped = k.dropped;
  s.pushes = k.pushes;
  s.held = k.held.size();
  s.mode = k.mode;
  return s;
}

std::vector<Key> SyncEngine::Keys() const {
  std::vector<Key> keys;
  for (const auto& entry : keys_) {
    if (entry.second.params) keys.push_back(entry.first);
  }
  return keys;
}

}  // namespace pacer
