#include "worker/inflight_requests.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <sstream>

#include "common/gather.h"
#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/messages/request_validation.h"

namespace pacer {
namespace detail {
namespace {

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

void RoutedClient::InflightRequests::OnResponse(Message&& msg) {
  int ts = static_cast<int>(msg.meta.request_id());
  std::string error = msg.meta.error();
  if (msg.meta.redirect() && error.empty()) {
    Redirect(ts, msg);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = pending.find(ts);
    if (it == pending.end()) {
      LOG(WARNING) << Prefix() << "dropped a response to unknown or abandoned request " << ts
                   << " from rank " << msg.meta.sender();
      return;
    }
    if (it->second->answer) {
      it->second->answer->Merge({msg.meta.version(), msg.meta.complete_clock(), msg.meta.clock(),
                                 msg.meta.unchanged_keys()});
    }
    if (error.empty() && it->second->pull) {
      if (!msg.vals.empty() && msg.meta.value_size() != static_cast<int>(value_size)) {
        error = StrCat(Prefix(), "server rank ", msg.meta.sender(), " answered with values of ",
                       msg.meta.value_size(), " bytes, this KVWorker holds values of ", value_size);
      } else {
        it->second->pull->AddResponse(std::move(msg));
      }
    }
  }
  PartDone(ts, error);
}

void RoutedClient::InflightRequests::Redirect(int ts, const Message& msg) {
  std::shared_ptr<Pending> p;
  Part part;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = pending.find(ts);
    const int index = msg.meta.part();
    if (it == pending.end() || index < 0 || index >= static_cast<int>(it->second->parts.size())) {
      LOG(WARNING) << Prefix() << "dropped a redirect for unknown request " << ts << " part "
                   << index << " from rank " << msg.meta.sender();
      return;
    }
    p = it->second;
    part = p->parts[index];
  }
  std::string error;
  try {
    node.routing().Install(Router::Decode(msg.meta.routing(), node.roles().num_servers()));
    // A push-pull whose push was applied before its keys moved: only the pull is left to do.
    const Operation op = msg.meta.pushed() ? Operation::kPull : part.op;
    SendParts(ts, CutParts(ts, *p, op, &part.positions));
  } catch (const std::exception& e) {
    error = StrCat(Prefix(), "redirected by server rank ", msg.meta.sender(), ": ", e.what());
  }
  PartDone(ts, error);
}

const std::vector<size_t>& RoutedClient::InflightRequests::OffsetsOf(Pending& p) {
  std::lock_guard<std::mutex> lock(mu);
  const Request& request = p.request;
  const size_t n = request.keys.count<Key>();
  if (p.offsets.empty()) {
    const int32_t* lens = request.lens.as<int32_t>();
    const size_t uniform = request.values.size() / n;
    p.offsets.resize(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      p.offsets[i + 1] =
          p.offsets[i] + (lens ? static_cast<size_t>(lens[i]) * value_size : uniform);
    }
  }
  return p.offsets;
}

RoutedClient::InflightRequests::Cut RoutedClient::InflightRequests::CutParts(
    int ts, Pending& p, Operation op, const std::vector<size_t>* positions) {
  const Request& request = p.request;
  const bool push = op != Operation::kPull;
  const Key* keys = request.keys.as<Key>();
  const size_t n = request.keys.count<Key>();
  const bool whole = positions == nullptr;
  std::vector<Key> part_keys;
  if (!whole) {
    for (size_t i : *positions) part_keys.push_back(keys[i]);
  }
  const std::shared_ptr<const Router> table = node.routing().current();
  std::vector<std::vector<size_t>> slices =
      whole ? table->Slice(keys, n) : table->Slice(part_keys.data(), part_keys.size());
  // A push-pull resent as a pull asks for the iteration after the one it pushed (see
  // ParameterServer).
  const bool pull_after_push = request.op == Operation::kPushPull && op == Operation::kPull;
  Cut messages;
  for (int server = 0; server < table->num_servers(); ++server) {
    if (slices[server].empty()) continue;
    std::vector<size_t> positions_of_server = std::move(slices[server]);
    if (!whole) {
      for (size_t& j : positions_of_server) j = (*positions)[j];
    }
    for (std::vector<size_t>& slice : SplitBySize(p, push, std::move(positions_of_server))) {
      messages.emplace_back(server, MessageOf(ts, p, op, pull_after_push, table->epoch(), slice));
      std::lock_guard<std::mutex> lock(mu);
      messages.back().second.meta.set_part(static_cast<int>(p.parts.size()));
      p.parts.push_back({op, std::move(slice)});
    }
  }
  return messages;
}

std::vector<std::vector<size_t>> RoutedClient::InflightRequests::SplitBySize(
    Pending& p, bool push, std::vector<size_t> slice) {
  const size_t limit = static_cast<size_t>(std::max<int64_t>(0, max_message_bytes));
  std::vector<std::vector<size_t>> out;
  const Request& request = p.request;
  // Bytes of each key: a push's from its values; a pull's from the lengths earlier pulls saw.
  std::vector<size_t> bytes;
  if (limit > 0 && push && request.values.size() > limit) {
    const std::vector<size_t>& offsets = OffsetsOf(p);
    for (size_t i : slice) bytes.push_back(offsets[i + 1] - offsets[i]);
  } else if (limit > 0 && !push && slice.size() > 1) {
    const Key* keys = request.keys.as<Key>();
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i : slice) {
      auto seen = known_lens.find(keys[i]);
      if (seen == known_lens.end()) break;
      bytes.push_back(static_cast<size_t>(seen->second) * value_size);
    }
  }
  if (bytes.size() != slice.size()) {
    out.push_back(std::move(slice));
    return out;
  }
  size_t filled = 0;
  for (size_t j = 0; j < slice.size(); ++j) {
    if (out.empty() || (filled > 0 && filled + bytes[j] > limit)) {
      out.emplace_back();
      filled = 0;
    }
    out.back().push_back(slice[j]);
    filled += bytes[j];
  }
  return out;
}

Message RoutedClient::InflightRequests::MessageOf(int ts, Pending& p, Operation op,
                                                  bool pull_after_push, int64_t epoch,
                                                  const std::vector<size_t>& slice) {
  const Request& request = p.request;
  const bool push = op != Operation::kPull;
  const Key* keys = request.keys.as<Key>();
  const int32_t* lens = request.lens.as<int32_t>();
  const size_t n = request.keys.count<Key>();
  Message msg;
  proto::Meta& meta = msg.meta;
  meta.set_command(CommandOf(op));
  meta.set_sender(node.rank());
  meta.set_app_id(app_id);
  meta.set_client_id(client_id);
  meta.set_request_id(ts);
  meta.set_value_size(static_cast<int>(value_size));
  meta.set_user_command(request.user_command);
  meta.set_clock(request.sync.clock + (pull_after_push && !request.sync.init ? 1 : 0));
  meta.set_version(request.sync.version);
  meta.set_weight(request.sync.weight);
  if (push) {
    for (int rank : request.sync.relayed) meta.add_relayed(rank);
    meta.set_cache_gradient(request.sync.cache_gradient);
    meta.set_same_as_last(request.sync.same_as_last);
  }
  meta.set_init(request.sync.init && push);
  meta.set_after_own_push(request.sync.after_own_push);
  meta.set_keep_parameters(request.sync.keep_parameters && !push);
  meta.set_state(request.sync.state);
  meta.set_epoch(epoch);
  if (slice.size() == n) {
    msg.keys = request.keys;
    msg.lens = request.lens;
    if (push) msg.vals.push_back(request.values);
  } else {
    msg.keys = Gather(keys, slice);
    if (lens) msg.lens = Gather(lens, slice);
    // Values by reference, one fragment per run of consecutive keys.
    const std::vector<size_t>* offsets = push ? &OffsetsOf(p) : nullptr;
    for (size_t j = 0; push && j < slice.size();) {
      size_t end = j + 1;
      while (end < slice.size() && slice[end] == slice[end - 1] + 1) ++end;
      size_t begin_byte = (*offsets)[slice[j]], end_byte = (*offsets)[slice[end - 1] + 1];
      msg.vals.push_back(request.values.Slice(begin_byte, end_byte - begin_byte));
      j = end;
    }
  }
  return msg;
}

void RoutedClient::InflightRequests::SendParts(int ts, Cut messages) {
  // Counted before any is sent: a send may complete, and its response arrive, at once.
  tracker.AddParts(ts, 2 * static_cast<int>(messages.size()));
  for (auto& [server, msg] : messages) {
    std::weak_ptr<InflightRequests> weak = shared_from_this();
    auto on_sent = [weak, ts](const std::string& send_error) {
      auto state = weak.lock();
      if (!state) return;
      state->PartDone(ts, send_error);
      if (!send_error.empty()) state->PartDone(ts, send_error);  // no response will come
    };
    node.transport().Send(node.roles().ServerRank(server), msg, std::move(on_sent));
  }
}

uint8_t* RoutedClient::InflightRequests::Place(const DecodedHeader& header) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = pending.find(static_cast<int>(header.meta.request_id()));
  if (it == pending.end() || !it->second->pull) return nullptr;
  return it->second->pull->Place(header, known_lens);
}

void RoutedClient::InflightRequests::Complete(int ts) {
  std::shared_ptr<Pending> p;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = pending.find(ts);
    if (it == pending.end()) return;
    p = std::move(it->second);
    pending.erase(it);
  }
  const Operation op = p->request.op;
  std::function<void()> callback = std::move(p->request.callback);
  std::string error = tracker.ErrorOf(ts);
  if (error.empty() && p->pull) {
    std::vector<int32_t> lens;
    error = p->pull->Assemble(Prefix(), OperationName(op), &lens);
    // Pulls answered in several parts place values by the lengths seen before, and a pull larger
    // than a message is cut by them the next time; other pulls skip the bookkeeping.
    auto larger_than_a_message = [&] {
      return max_message_bytes > 0 && std::accumulate(lens.begin(), lens.end(), int64_t{0}) *
                                              static_cast<int64_t>(value_size) >
                                          max_message_bytes;
    };
    if (error.empty() && lens.size() > 1 && (p->pull->targets() > 1 || larger_than_a_message())) {
      std::lock_guard<std::mutex> lock(mu);
      const Key* keys = p->pull->keys().as<Key>();
      for (size_t i = 0; i < lens.size(); ++i) known_lens[keys[i]] = lens[i];
    }
  }
  if (error.empty() && callback) {
    try {
      callback();
    } catch (const std::exception& e) {
      error = Prefix() + "callback of request " + std::to_string(ts) + " threw: " + e.what();
    }
  }
  tracker.Finish(ts, error);
}

}  // namespace detail
}  // namespace pacer
