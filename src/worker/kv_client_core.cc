#include "pacer/detail/kv_client_core.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "pacer/error.h"
#include "ps/buffer_pool.h"
#include "ps/gather.h"
#include "ps/request_validation.h"
#include "ps/session_core.h"
#include "ps/str_cat.h"
#include "worker/request_tracker.h"

namespace pacer {
namespace detail {
namespace {

const char* OperationName(Operation op) {
  switch (op) {
    case Operation::kPush:
      return "push";
    case Operation::kPull:
      return "pull";
    case Operation::kPushPull:
      return "push-pull";
  }
  return "?";
}

proto::Command CommandOf(Operation op) {
  switch (op) {
    case Operation::kPush:
      return proto::PUSH;
    case Operation::kPull:
      return proto::PULL;
    case Operation::kPushPull:
      return proto::PUSH_PULL;
  }
  return proto::COMMAND_UNSPECIFIED;
}

}  // namespace

struct KVClientCore::State {
  struct Pending {
    Operation op;
    Buffer keys;
    int targets;  // servers asked
    PullDestination destination;
    std::function<void()> callback;
    std::vector<Message> responses;
    // Values received straight into the destination (Place): its address and the byte offsets
    // of the keys it assumed.
    uint8_t* placed = nullptr;
    std::vector<size_t> placed_offsets;
    bool placement_impossible = false;
  };

  State(SessionCore& s, int app, size_t vsize)
      : session(s),
        app_id(app),
        value_size(vsize),
        spin(std::chrono::microseconds(std::max(0, s.config().spin_us))),
        tracker(s.rank()) {}

  void PartDone(int ts, const std::string& error) {
    if (tracker.PartDone(ts, error)) Complete(ts);
  }
  void OnResponse(Message&& msg);
  uint8_t* Place(const DecodedHeader& header);
  void Complete(int ts);
  std::string Assemble(Pending& p);
  std::string Prefix() const { return "rank " + std::to_string(session.rank()) + ": "; }

  SessionCore& session;
  const int app_id;
  const size_t value_size;
  SpinPolicy spin;  // for Wait
  int client_id = -1;
  RequestTracker tracker;
  BufferPool pool;
  std::mutex mu;
  std::map<int, std::shared_ptr<Pending>> pending;
  std::unordered_map<Key, int32_t> known_lens;  // value counts seen in pulls, for Place
};

void KVClientCore::State::OnResponse(Message&& msg) {
  int ts = static_cast<int>(msg.meta.request_id());
  std::string error = msg.meta.error();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = pending.find(ts);
    if (it == pending.end()) {
      LOG(WARNING) << Prefix() << "dropped a response to unknown or abandoned request " << ts
                   << " from rank " << msg.meta.sender();
      return;
    }
    if (error.empty() && it->second->op != Operation::kPush) {
      if (!msg.vals.empty() && msg.meta.value_size() != static_cast<int>(value_size)) {
        std::ostringstream s;
        s << Prefix() << "server rank " << msg.meta.sender() << " answered with values of "
          << msg.meta.value_size() << " bytes, this KVWorker holds values of " << value_size;
        error = s.str();
      } else {
        it->second->responses.push_back(std::move(msg));
      }
    }
  }
  PartDone(ts, error);
}

// A pull's values can be received straight into the caller's buffer (no second copy) when their
// place there is known before they arrive: for one server, from its response's header; for
// several, from the lengths of the keys seen in earlier pulls. Assemble checks the guess and
// repairs the layout if it was wrong.
uint8_t* KVClientCore::State::Place(const DecodedHeader& header) {
  const WireHeader& w = header.wire;
  if (!(w.flags & WireHeader::kIndexInHeader) || !header.meta.error().empty() ||
      header.meta.value_size() != static_cast<int>(value_size) || w.keys_bytes == 0) {
    return nullptr;
  }
  const Key* rkeys = header.index.as<Key>();
  const size_t m = w.keys_bytes / sizeof(Key);
  const int32_t* rlens =
      w.lens_bytes ? header.index.Slice(w.keys_bytes, w.lens_bytes).as<int32_t>() : nullptr;
  const size_t uniform = w.vals_bytes / value_size / m;
  auto length = [&](size_t j) { return rlens ? static_cast<size_t>(rlens[j]) : uniform; };

  std::lock_guard<std::mutex> lock(mu);
  auto it = pending.find(static_cast<int>(header.meta.request_id()));
  if (it == pending.end()) return nullptr;
  Pending& p = *it->second;
  const Key* keys = p.keys.as<Key>();
  const size_t n = p.keys.count<Key>();
  if (p.op == Operation::kPush || p.placement_impossible) return nullptr;
  if (p.placed == nullptr) {
    std::vector<size_t> offsets(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      size_t len = 0;
      if (p.targets == 1) {
        if (m != n || rkeys[i] != keys[i]) return nullptr;
        len = length(i);
      } else if (auto known = known_lens.find(keys[i]); known != known_lens.end()) {
        len = static_cast<size_t>(known->second);
      } else {
        p.placement_impossible = true;
        return nullptr;
      }
      offsets[i + 1] = offsets[i] + len * value_size;
    }
    p.placed = p.destination.values(offsets[n]);
    if (p.placed == nullptr) {
      p.placement_impossible = true;
      return nullptr;
    }
    p.placed_offsets = std::move(offsets);
  }
  // This response's keys must be a run of the request's, with the lengths the layout assumed.
  const size_t first = static_cast<size_t>(std::lower_bound(keys, keys + n, rkeys[0]) - keys);
  if (first + m > n || std::memcmp(keys + first, rkeys, m * sizeof(Key)) != 0) return nullptr;
  for (size_t j = 0; j < m; ++j) {
    if (p.placed_offsets[first + j + 1] - p.placed_offsets[first + j] != length(j) * value_size) {
      return nullptr;
    }
  }
  return p.placed + p.placed_offsets[first];
}

std::string KVClientCore::State::Assemble(Pending& p) {
  const Key* keys = p.keys.as<Key>();
  const size_t n = p.keys.count<Key>();
  struct Source {
    size_t response = SIZE_MAX;
    size_t offset = 0;  // in the response's values
  };
  std::vector<Source> source(n);
  std::vector<int32_t> lens(n, 0);
  std::vector<Buffer> values;  // per response
  for (const Message& r : p.responses) {
    const Key* rkeys = r.keys.as<Key>();
    const size_t rn = r.num_keys();
    values.push_back(r.vals_buffer());
    const int32_t* rlens = r.lens.as<int32_t>();
    size_t uniform = rn == 0 ? 0 : values.back().size() / value_size / rn;
    if (rlens == nullptr && uniform * rn * value_size != values.back().size()) {
      return StrCat(Prefix(), "server rank ", r.meta.sender(), " answered ", values.back().size(),
                    " bytes of values for ", rn, " keys without lengths");
    }
    size_t offset = 0;
    for (size_t j = 0; j < rn; ++j) {
      const Key* at = std::lower_bound(keys, keys + n, rkeys[j]);
      size_t pos = static_cast<size_t>(at - keys);
      if (at == keys + n || *at != rkeys[j] || source[pos].response != SIZE_MAX) {
        return StrCat(Prefix(), "server rank ", r.meta.sender(), " answered key ", rkeys[j],
                      at != keys + n && *at == rkeys[j] ? " twice" : ", which was not requested");
      }
      lens[pos] = rlens ? rlens[j] : static_cast<int32_t>(uniform);
      source[pos] = {values.size() - 1, offset};
      offset += static_cast<size_t>(lens[pos]) * value_size;
    }
  }
  std::vector<size_t> offsets(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    if (source[i].response == SIZE_MAX) {
      return StrCat(Prefix(), "no server answered key ", keys[i], " of a ", OperationName(p.op),
                    " of ", n, " keys");
    }
    offsets[i + 1] = offsets[i] + static_cast<size_t>(lens[i]) * value_size;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < n; ++i) known_lens[keys[i]] = lens[i];
  }
  uint8_t* out = nullptr;
  if (p.placed != nullptr && p.placed_offsets == offsets) {
    out = p.placed;  // the layout guessed in Place holds: placed values are where they belong
  } else {
    if (p.placed != nullptr) {
      // Some values were received in place at offsets that turned out wrong: move them aside
      // before the destination is laid out anew.
      for (Buffer& v : values) {
        if (v.data() >= p.placed && v.data() < p.placed + p.placed_offsets.back()) {
          v = Buffer::Copy(v.data(), v.size());
        }
      }
    }
    out = p.destination.values(offsets[n]);
    if (out == nullptr && offsets[n] > 0) {
      return StrCat(Prefix(), "the destination buffer does not hold the ", offsets[n],
                    " bytes pulled for ", n, " keys");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* from = values[source[i].response].data() + source[i].offset;
    const size_t bytes = offsets[i + 1] - offsets[i];
    if (bytes > 0 && from != out + offsets[i]) std::memcpy(out + offsets[i], from, bytes);
  }
  if (p.destination.lengths) {
    int32_t* out_lens = p.destination.lengths(n);
    if (out_lens == nullptr)
      return StrCat(Prefix(), "the lengths buffer does not hold ", n, " entries");
    std::copy(lens.begin(), lens.end(), out_lens);
  }
  return "";
}

void KVClientCore::State::Complete(int ts) {
  std::shared_ptr<Pending> p;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = pending.find(ts);
    if (it == pending.end()) return;
    p = std::move(it->second);
    pending.erase(it);
  }
  std::string error = tracker.ErrorOf(ts);
  if (error.empty() && p->op != Operation::kPush) error = Assemble(*p);
  if (error.empty() && p->callback) {
    try {
      p->callback();
    } catch (const std::exception& e) {
      error = Prefix() + "callback of request " + std::to_string(ts) + " threw: " + e.what();
    }
  }
  tracker.Finish(ts, error);
}

KVClientCore::KVClientCore(Session& session, int app_id, size_t value_size)
    : state_(std::make_shared<State>(session.core(), app_id, value_size)) {
  if (!session.is_worker()) {
    throw Error("rank " + std::to_string(session.rank()) + " is a " + RoleName(session.role()) +
                ", not a worker: it cannot host a KVWorker");
  }
  std::weak_ptr<State> weak = state_;
  state_->client_id = state_->session.AttachClient(
      [weak](Message&& msg) {
        if (auto state = weak.lock()) state->OnResponse(std::move(msg));
      },
      [weak](const DecodedHeader& header) -> uint8_t* {
        auto state = weak.lock();
        return state ? state->Place(header) : nullptr;
      });
}

KVClientCore::~KVClientCore() { state_->session.DetachClient(state_->client_id); }

int KVClientCore::Submit(Request request) {
  State& s = *state_;
  const bool push = request.op != Operation::kPull;
  const Key* keys = request.keys.as<Key>();
  const size_t n = request.keys.count<Key>();
  const int32_t* lens = request.lens.as<int32_t>();
  const size_t num_lens = request.lens.count<int32_t>();
  std::string error;
  if (push && request.values.size() % s.value_size != 0) {
    error = std::to_string(request.values.size()) + " bytes of values is not a multiple of " +
            std::to_string(s.value_size);
  } else {
    error = ValidateKeyValues(keys, n, lens, num_lens,
                              push ? request.values.size() / s.value_size : 0, push);
  }
  if (!error.empty()) {
    throw Error(s.Prefix() + "invalid " + OperationName(request.op) + ": " + error);
  }

  // Byte offset of each key's values, for slicing a push by server.
  std::vector<size_t> offsets;
  if (push) {
    offsets.resize(n + 1, 0);
    size_t uniform = request.values.size() / n;
    for (size_t i = 0; i < n; ++i) {
      offsets[i + 1] = offsets[i] + (lens ? static_cast<size_t>(lens[i]) * s.value_size : uniform);
    }
  }
  const Router& router = s.session.router();
  std::vector<std::vector<size_t>> slices = router.Slice(keys, n);
  int targets = 0;
  for (const auto& slice : slices) targets += !slice.empty();

  auto pending = std::make_shared<State::Pending>();
  pending->op = request.op;
  pending->keys = request.keys;
  pending->targets = targets;
  pending->destination = std::move(request.destination);
  pending->callback = std::move(request.callback);
  int ts = s.tracker.Start(2 * targets);  // each server: the send completes, the response arrives
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.pending[ts] = pending;
  }

  for (int server = 0; server < router.num_servers(); ++server) {
    const std::vector<size_t>& slice = slices[server];
    if (slice.empty()) continue;
    Message msg;
    proto::Meta& meta = msg.meta;
    meta.set_command(CommandOf(request.op));
    meta.set_sender(s.session.rank());
    meta.set_app_id(s.app_id);
    meta.set_client_id(s.client_id);
    meta.set_request_id(ts);
    meta.set_value_size(static_cast<int>(s.value_size));
    meta.set_user_command(request.user_command);
    if (slice.size() == n) {
      msg.keys = request.keys;
      msg.lens = request.lens;
      if (push) msg.vals.push_back(request.values);
    } else {
      msg.keys = Gather(keys, slice);
      if (lens) msg.lens = Gather(lens, slice);
      // Values by reference, one fragment per run of consecutive keys.
      for (size_t j = 0; push && j < slice.size();) {
        size_t end = j + 1;
        while (end < slice.size() && slice[end] == slice[end - 1] + 1) ++end;
        size_t begin_byte = offsets[slice[j]], end_byte = offsets[slice[end - 1] + 1];
        msg.vals.push_back(request.values.Slice(begin_byte, end_byte - begin_byte));
        j = end;
      }
    }
    std::shared_ptr<State> state = state_;
    auto on_sent = [state, ts](const std::string& send_error) {
      state->PartDone(ts, send_error);
      if (!send_error.empty()) state->PartDone(ts, send_error);  // no response will come
    };
    s.session.transport().Send(SessionCore::ServerRank(server), msg, std::move(on_sent));
  }
  return ts;
}

Buffer KVClientCore::Copy(const void* data, size_t bytes) {
  uint8_t* out = nullptr;
  Buffer copy = state_->pool.Allocate(bytes, &out);
  if (bytes > 0) std::memcpy(out, data, bytes);
  return copy;
}

void KVClientCore::Wait(int timestamp) {
  auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(state_->session.config().timeout_s * 1000));
  try {
    state_->tracker.Wait(timestamp, timeout, /*throw_on_timeout=*/true, &state_->spin);
  } catch (const TimeoutError&) {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->pending.erase(timestamp);  // late responses are dropped, never written
    throw;
  }
}

bool KVClientCore::Wait(int timestamp, std::chrono::milliseconds timeout) {
  return state_->tracker.Wait(timestamp, timeout, /*throw_on_timeout=*/false, &state_->spin);
}

}  // namespace detail
}  // namespace pacer
