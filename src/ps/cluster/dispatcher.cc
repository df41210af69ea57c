#include "ps/cluster/dispatcher.h"

#include <glog/logging.h>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// Node-level commands whose sender awaits no answer.
bool OneWay(proto::Command command) {
  return command != proto::TASK && command != proto::RELAY_ORDER && command != proto::RELAY_START &&
         command != proto::LINK_PROBE && command != proto::PROBE_ECHO &&
         command != proto::BATCH_ORDER;
}

// Commands taken by Take, never by a KVServer.
bool IsNodeLevel(proto::Command command) {
  switch (command) {
    case proto::BARRIER:
    case proto::BARRIER_RELEASE:
    case proto::ITERATION_REPORT:
    case proto::SERVER_REPORT:
    case proto::ROUTING_UPDATE:
    case proto::TASK:
    case proto::HEARTBEAT:
    case proto::JOB_ABORT:
    case proto::WORKER_EXCLUDED:
    case proto::RELAY_ORDER:
    case proto::RELAY_START:
    case proto::RELAY_STOP:
    case proto::RELAY_GRADIENT:
    case proto::RELAY_PARAMETERS:
    case proto::LINK_PROBE:
    case proto::PROBE_ECHO:
    case proto::BATCH_SIZES:
    case proto::BATCH_ORDER:
      return true;
    default:
      return false;
  }
}

}  // namespace

Dispatcher::Dispatcher(Role role, int rank, Rejecter reject, std::chrono::milliseconds early_wait)
    : role_(role), rank_(rank), reject_(std::move(reject)), early_wait_(early_wait) {}

void Dispatcher::Take(proto::Command command, Sink sink) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!sink) {  // its owner is gone: later messages wait for nobody, they are refused
    node_sinks_.erase(command);
    held_.erase(command);
    return;
  }
  node_sinks_[command] = sink;
  auto held = held_.find(command);
  if (held == held_.end()) return;
  std::vector<Message> early = std::move(held->second);
  held->second.clear();
  for (Message& msg : early) sink(std::move(msg));
}

void Dispatcher::Hold(proto::Command command) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  held_[command];
}

void Dispatcher::AttachServer(int app_id, Sink sink, Consumers consumers) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (role_ != Role::kServer) {
    throw Error(StrCat("rank ", rank_, " is a ", RoleName(role_),
                       ", not a server: it cannot host a KVServer"));
  }
  if (servers_.count(app_id)) {
    throw Error(StrCat("a KVServer for app ", app_id, " already exists on rank ", rank_));
  }
  servers_[app_id] = sink;
  if (consumers) server_consumers_[app_id] = std::move(consumers);
  detached_servers_.erase(app_id);
  auto early = early_requests_.find(app_id);
  if (early == early_requests_.end()) return;
  std::vector<Message> messages = std::move(early->second.messages);
  early_requests_.erase(early);
  for (Message& msg : messages) sink(std::move(msg));
}

void Dispatcher::DetachServer(int app_id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  servers_.erase(app_id);
  server_consumers_.erase(app_id);
  detached_servers_.insert(app_id);
}

void Dispatcher::ForEachServer(const std::function<void(const Sink&)>& fn) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (const auto& entry : servers_) fn(entry.second);
}

int Dispatcher::AttachClient(Sink sink, Placer placer) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const int id = next_client_id_++;
  clients_[id] = std::move(sink);
  if (placer) placers_[id] = std::move(placer);
  return id;
}

void Dispatcher::DetachClient(int client_id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  clients_.erase(client_id);
  placers_.erase(client_id);
}

uint8_t* Dispatcher::Place(const DecodedHeader& header) {
  if (!header.meta.is_response()) return nullptr;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = placers_.find(header.meta.client_id());
  return it == placers_.end() ? nullptr : it->second(header);
}

std::shared_ptr<PayloadConsumer> Dispatcher::Consume(const Message& msg) {
  if (msg.meta.is_response()) return nullptr;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = server_consumers_.find(msg.meta.app_id());
  return it == server_consumers_.end() ? nullptr : it->second(msg);
}

void Dispatcher::Dispatch(Message&& msg) {
  std::unique_lock<std::recursive_mutex> lock(mu_);
  // Every message (heartbeats at least a few per second) is a chance to look.
  if (!early_requests_.empty()) RejectStaleEarlyRequests(lock);
  const proto::Meta& meta = msg.meta;
  if (IsNodeLevel(meta.command()) && !meta.is_response()) {
    DispatchNodeLevel(lock, std::move(msg));
  } else if (meta.is_response()) {
    auto it = clients_.find(meta.client_id());
    if (it == clients_.end()) {
      LOG(WARNING) << "rank " << rank_ << " dropped a response for unknown client "
                   << meta.client_id() << " (" << Describe(meta) << ") from rank " << meta.sender();
      return;
    }
    it->second(std::move(msg));
  } else {
    DispatchRequest(lock, std::move(msg));
  }
}

void Dispatcher::DispatchNodeLevel(std::unique_lock<std::recursive_mutex>& lock, Message&& msg) {
  const proto::Command command = msg.meta.command();
  auto sink = node_sinks_.find(command);
  if (sink != node_sinks_.end()) {
    sink->second(std::move(msg));
    return;
  }
  auto held = held_.find(command);
  if (held != held_.end()) {
    held->second.push_back(std::move(msg));
    return;
  }
  const std::string why = StrCat(RoleName(role_), " rank ", rank_, " takes no ",
                                 proto::Command_Name(command), " messages");
  if (OneWay(command)) {
    LOG(WARNING) << why << ": dropped one from rank " << msg.meta.sender();
    return;
  }
  lock.unlock();
  reject_(msg.meta, why);
}

void Dispatcher::DispatchRequest(std::unique_lock<std::recursive_mutex>& lock, Message&& msg) {
  const proto::Meta& meta = msg.meta;
  if (role_ != Role::kServer) {
    lock.unlock();
    reject_(meta, StrCat("rank is a ", RoleName(role_), ", not a server"));
    return;
  }
  auto it = servers_.find(meta.app_id());
  if (it != servers_.end()) {
    it->second(std::move(msg));
  } else if (detached_servers_.count(meta.app_id())) {
    lock.unlock();
    reject_(meta, StrCat("no KVServer for app ", meta.app_id(), " any more"));
  } else {
    EarlyRequests& early = early_requests_[meta.app_id()];
    if (early.messages.empty()) early.since = std::chrono::steady_clock::now();
    early.messages.push_back(std::move(msg));
  }
}

void Dispatcher::RejectStaleEarlyRequests(std::unique_lock<std::recursive_mutex>& lock) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<int, Message>> stale;
  for (auto it = early_requests_.begin(); it != early_requests_.end();) {
    if (now - it->second.since < early_wait_) {
      ++it;
      continue;
    }
    for (Message& msg : it->second.messages) stale.emplace_back(it->first, std::move(msg));
    it = early_requests_.erase(it);
  }
  if (stale.empty()) return;
  lock.unlock();
  const double waited_s = std::chrono::duration<double>(early_wait_).count();
  for (const auto& [app, msg] : stale) {
    reject_(msg.meta, StrCat("no KVServer for app ", app, " started on server rank ", rank_,
                             " within ", waited_s, " s of the first request for it"));
  }
  lock.lock();
}

}  // namespace pacer
