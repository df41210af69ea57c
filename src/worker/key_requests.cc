#include "worker/key_requests.h"

#include <chrono>
#include <cstring>

#include "common/relative_distance.h"
#include "common/str_cat.h"
#include "pacer/error.h"
#include "pacer/reducer.h"

namespace pacer {

using SteadyClock = std::chrono::steady_clock;

KeyRequests::~KeyRequests() {
  for (const KeyState& s : states_) {
    if (s.pulling && !s.relayed_out) kv_.Abandon(s.pull_ts);
  }
}

void KeyRequests::Prepare() {
  const size_t n = layout_.units().size();
  states_.assign(n, KeyState());
  for (size_t u = 0; u < n; ++u) {
    KeyState& s = states_[u];
    const TensorLayout::Unit& layout_unit = unit(static_cast<int>(u));
    s.send_stage.resize(layout_unit.count);
    s.receive_stage.resize(layout_unit.count);
    s.member_params.assign(layout_unit.members.size(), nullptr);
  }
}

void KeyRequests::StartIteration(int64_t clock, double weight, bool skip_unchanged) {
  clock_ = clock;
  weight_ = weight;
  skipping_ = skip_unchanged;
  traffic_ = Traffic();
  for (KeyState& s : states_) {
    s.pushed_members = 0;
    s.done = false;
    s.error.clear();
    s.timed_out = false;
    s.lost = false;
    s.keep_parameters = false;
  }
  ForgetRelays();
  // The relay link changes its orders only at BeginIteration: read them once per iteration.
  withholding_ = relay_ != nullptr && relay_->Withholds();
  relaying_out_ = relay_ != nullptr && relay_->PartnerFor(clock) >= 0;
}

void KeyRequests::ForgetRelays() {
  relaying_out_ = false;
  for (KeyState& s : states_) {
    s.relayed_out = false;
    s.relayed_sum = Buffer();
    s.carried.clear();
    s.carried_weight = 0;
  }
}

void KeyRequests::Queue(int u, int priority) {
  KeyState& s = states_[u];
  s.queued = true;
  s.priority = priority;
  s.order = next_order_++;
}

int KeyRequests::Send(int u, detail::Operation op, int64_t clock, bool init, bool after_own_push) {
  KeyState& s = states_[u];
  const size_t bytes = unit(u).count * sizeof(float);
  detail::Request request{op, Buffer(&layout_.units()[u].key, sizeof(Key)), {}, {}, {}, nullptr, 0,
                          {}};
  // A withheld gradient: no values (a length of 0) and weight 0. A partner never withholds.
  const bool own_gradient = op == detail::Operation::kPush && !init && s.carried.empty();
  const bool withheld = own_gradient && withholding_;
  // SMS's skip: only a worker's own gradient, sent to the servers, is kept there.
  const bool kept = own_gradient && !withheld && skipping_;
  const bool same_as_last = kept && Unchanged(u);
  request.sync.clock = clock;
  request.sync.version = s.version;
  request.sync.weight = withheld ? 0.0 : weight_ + s.carried_weight;
  request.sync.init = init;
  request.sync.after_own_push = after_own_push;
  if (op == detail::Operation::kPush) request.sync.relayed = s.carried;
  request.sync.same_as_last = same_as_last;
  request.sync.cache_gradient = kept && !same_as_last;
  // Only an iteration's own pull: a broadcast or a fetch wants the servers' values, and what this
  // worker forwards to the stragglers it carries must be what the servers sent.
  s.keep_parameters =
      op == detail::Operation::kPull && after_own_push && skipping_ && s.carried.empty();
  request.sync.keep_parameters = s.keep_parameters;
  if (withheld || same_as_last) {
    static constexpr int32_t kNoValues = 0;
    request.lens = Buffer(&kNoValues, sizeof(kNoValues));
    if (same_as_last) {
      ++traffic_.pushes_skipped;
      traffic_.bytes_skipped += static_cast<int64_t>(bytes);
    }
  } else if (op != detail::Operation::kPull) {
    request.values = Buffer(s.send, bytes);
    traffic_.bytes_out += static_cast<int64_t>(bytes);
  }
  if (kept && !same_as_last) {
    s.last_sent.assign(s.send, s.send + unit(u).count);
    s.last_weight = request.sync.weight;
  } else if (op == detail::Operation::kPush && !init && !same_as_last && !s.last_sent.empty()) {
    std::vector<float>().swap(s.last_sent);  // the server frees its copy on this push
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

bool KeyRequests::Unchanged(int u) const {
  const KeyState& s = states_[u];
  if (s.last_sent.empty() || s.last_weight != weight_) return false;
  return WithinRelative(s.send, s.last_sent.data(), s.last_sent.size(), skip_eps_);
}

void KeyRequests::Await(int u, int ts) {
  Fail(u, [&] { kv_.Wait(ts); });
}

void KeyRequests::Fail(int u, const std::function<void()>& wait) {
  KeyState& s = states_[u];
  try {
    wait();
  } catch (const TimeoutError& e) {
    if (s.error.empty()) s.error = e.what();
    s.timed_out = true;
  } catch (const LostRankError& e) {
    s.error = e.what();
    s.lost = true;
  } catch (const Error& e) {
    if (s.error.empty()) s.error = e.what();
  }
}

bool KeyRequests::AnyQueued() const {
  for (const KeyState& s : states_) {
    if (s.queued) return true;
  }
  return false;
}

void KeyRequests::Pump() {
  while (pushes_inflight_ < credit_) {
    int best = -1;
    for (size_t u = 0; u < states_.size(); ++u) {
      const KeyState& s = states_[u];
      if (!s.queued) continue;
      if (best < 0 || s.priority > states_[best].priority ||
          (s.priority == states_[best].priority && s.order < states_[best].order)) {
        best = static_cast<int>(u);
      }
    }
    if (best < 0) return;
    if (!traffic_.any_push_sent) traffic_.first_push_sent = SteadyClock::now();
    traffic_.any_push_sent = true;
    SendPushPull(best);
  }
}

void KeyRequests::SendPushPull(int u) {
  KeyState& s = states_[u];
  const size_t count = unit(u).count;
  const Key key = unit(u).key;
  s.queued = false;
  s.pulling = true;
  s.order = next_order_++;
  if (relaying_out_) {
    relay_->SendGradient(clock_, u, key, s.send, count, weight_);
    s.relayed_out = true;
    traffic_.bytes_out += static_cast<int64_t>(count * sizeof(float));
    traffic_.last_push_acked = SteadyClock::now();
    return;
  }
  if (relay_) {
    relay_->BeginPushing(clock_);
    CarryRelayed(u, relay_->Gather(clock_, u, count));
  }
  s.push_ts = Send(u, detail::Operation::kPush, clock_, false, false);
  s.pull_ts = Send(u, detail::Operation::kPull, clock_ + 1, false, true);
  s.pushing = true;
  ++pushes_inflight_;
}

// The stragglers' gradients summed into this worker's by RoutedClient::SumOf, one pass of the
// Reducer per kMaxInputs - 1 of them.
void KeyRequests::CarryRelayed(int u, const std::vector<RelayLink::Relayed>& relayed) {
  KeyState& s = states_[u];
  const size_t count = unit(u).count;
  for (size_t next = 0; next < relayed.size();) {
    std::vector<Span<const float>> inputs = {{s.send, count}};
    for (; next < relayed.size() && inputs.size() < Reducer::kMaxInputs; ++next) {
      inputs.push_back({relayed[next].values.as<float>(), count});
      s.carried.push_back(relayed[next].rank);
      s.carried_weight += relayed[next].weight;
    }
    s.relayed_sum = kv_.SumOf(inputs);
    s.send = s.relayed_sum.as<float>();
  }
}

void KeyRequests::ReleasePushes(bool block) {
  int oldest = -1;
  for (size_t u = 0; u < states_.size(); ++u) {
    KeyState& s = states_[u];
    if (!s.pushing) continue;
    bool finished = false;
    try {
      finished = kv_.Wait(s.push_ts, std::chrono::milliseconds(0));
    } catch (const LostRankError& e) {
      finished = true;
      s.error = e.what();
      s.lost = true;
    } catch (const Error& e) {
      finished = true;
      if (s.error.empty()) s.error = e.what();
    }
    if (finished) {
      s.pushing = false;
      --pushes_inflight_;
      traffic_.last_push_acked = SteadyClock::now();
      block = false;
    } else if (oldest < 0 || s.order < states_[oldest].order) {
      oldest = static_cast<int>(u);
    }
  }
  if (block && oldest >= 0) {
    Await(oldest, states_[oldest].push_ts);
    states_[oldest].pushing = false;
    --pushes_inflight_;
    traffic_.last_push_acked = SteadyClock::now();
  }
}

void KeyRequests::FinishPull(int u) {
  KeyState& s = states_[u];
  const size_t count = unit(u).count;
  if (s.relayed_out) {
    Fail(u, [&] {
      s.answer =
          std::make_shared<ResponseStamp>(relay_->ReceiveParameters(clock_, u, s.receive, count));
    });
  } else {
    Await(u, s.pull_ts);
  }
  s.pulling = false;
  s.done = true;
  traffic_.last_pull_done = SteadyClock::now();
  if (!s.error.empty()) return;
  if (!KeepParameters(u)) return;
  if (!s.carried.empty()) {
    relay_->ForwardParameters(clock_, u, unit(u).key, s.carried, s.receive, count, *s.answer);
  }
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

bool KeyRequests::KeepParameters(int u) {
  KeyState& s = states_[u];
  const size_t count = unit(u).count;
  if (s.answer->unchanged_keys == 0) {
    traffic_.bytes_in += static_cast<int64_t>(count * sizeof(float));
    if (s.keep_parameters) {
      s.last_received.assign(s.receive, s.receive + count);
    } else if (!s.relayed_out && !s.last_received.empty()) {
      // A plain pull: the server forgot what it sent, too. (A relayed iteration's parameters came
      // from the partner; what the server last sent this worker still stands.)
      std::vector<float>().swap(s.last_received);
    }
    return true;
  }
  if (!s.keep_parameters || s.last_received.size() != count) {
    s.error = StrCat("key ", unit(u).key, ": a server answered 'unchanged' to a pull of ",
                     s.keep_parameters ? "a key this worker holds no parameters of"
                                       : "parameters this worker does not keep");
    return false;
  }
  ++traffic_.pulls_unchanged;
  std::memcpy(s.receive, s.last_received.data(), count * sizeof(float));
  return true;
}

// Sends every queued push before blocking on a pull: the pull may wait for other workers' pushes,
// and theirs for nothing, so no worker holds back what another waits for.
void KeyRequests::WaitUnit(int u) {
  for (;;) {
    ReleasePushes(false);
    Pump();
    if (!AnyQueued()) break;
    ReleasePushes(true);
  }
  KeyState& s = states_[u];
  if (s.pushing) {
    Await(u, s.push_ts);
    s.pushing = false;
    --pushes_inflight_;
    traffic_.last_push_acked = SteadyClock::now();
  }
  if (s.pulling && !s.error.empty()) {  // the push failed: the server will not serve the pull
    if (!s.relayed_out) kv_.Abandon(s.pull_ts);
    s.pulling = false;
    s.done = true;
  }
  if (!s.pulling) return;
  // Every push is acknowledged without waiting for other workers; the pull may wait for them.
  // Collecting the acknowledgements first times the pushes (IterationStats::push_s) by their
  // acknowledgement, not by when a blocked pull let this worker notice it.
  while (pushes_inflight_ > 0) ReleasePushes(true);
  FinishPull(u);
}

}  // namespace pacer
