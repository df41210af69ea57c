#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "pacer/types.h"
#include "ps/messages/message.h"
#include "ps/transport/transport.h"

namespace pacer {

// Routes every message a node receives to the part that handles it: a request to the KVServer of
// its app, a response to the client that sent the request, and a node-level message (barriers,
// reports, routing tables, task requests) to the part that took its command. Requests that reach a
// server before its KVServer exists wait and are handed over when it attaches, so a worker's first
// push never races a server's start-up; a command can hold its early messages the same way. Those
// of an app whose KVServer does not attach within `early_wait` are rejected, naming the app, so a
// peer's requests for an app nobody serves neither pile up nor wait out their deadline unexplained.
// Sinks run on the transport's receiving thread and must not block.
class Dispatcher {
 public:
  using Sink = std::function<void(Message&&)>;
  using Placer = Transport::PayloadPlacer;
  using Consumers = Transport::PayloadConsumerFactory;
  // Answers a request that nothing here can serve with an error.
  using Rejecter = std::function<void(const proto::Meta& request, const std::string& error)>;

  Dispatcher(Role role, int rank, Rejecter reject, std::chrono::milliseconds early_wait);

  // Node-level messages of `command` (requests, not responses) go to `sink`, starting with those
  // held so far; nullptr stops them, and ends Hold's. Messages no sink takes are dropped (logged),
  // or, where they await an answer, rejected.
  void Take(proto::Command command, Sink sink);
  // Messages of `command` that come while no sink takes it wait for one.
  void Hold(proto::Command command);

  // The sink receives every request for `app_id`, starting with those that arrived before;
  // `consumers`, if set, may take a request's values as they arrive (Transport's streams).
  void AttachServer(int app_id, Sink sink, Consumers consumers = nullptr);
  void DetachServer(int app_id);
  // Runs `fn` on every attached server's sink (under the sinks' lock).
  void ForEachServer(const std::function<void(const Sink&)>& fn);
  // Returns the client id that responses carry back to `sink`; `placer`, if set, may choose where
  // the values of a large response land.
  int AttachClient(Sink sink, Placer placer = nullptr);
  void DetachClient(int client_id);

  // The transport's receive handler, placer and consumers' factory.
  void Dispatch(Message&& msg);
  uint8_t* Place(const DecodedHeader& header);
  std::shared_ptr<PayloadConsumer> Consume(const Message& msg);

 private:
  void DispatchNodeLevel(std::unique_lock<std::recursive_mutex>& lock, Message&& msg);
  void DispatchRequest(std::unique_lock<std::recursive_mutex>& lock, Message&& msg);
  // Rejects the early requests of apps that have waited longer than early_wait_ (outside the
  // lock, which is held again on return).
  void RejectStaleEarlyRequests(std::unique_lock<std::recursive_mutex>& lock);

  const Role role_;
  const int rank_;
  const Rejecter reject_;
  const std::chrono::milliseconds early_wait_;

  // Recursive: a sink may look at the servers (ForEachServer) while it runs.
  std::recursive_mutex mu_;
  std::map<proto::Command, Sink> node_sinks_;
  std::map<proto::Command, std::vector<Message>> held_;  // by command, while it has no sink
  std::map<int, Sink> servers_;
  std::map<int, Consumers> server_consumers_;
  struct EarlyRequests {
    std::chrono::steady_clock::time_point since;  // the first one's arrival
    std::vector<Message> messages;
  };
  std::map<int, EarlyRequests> early_requests_;  // by app
  std::set<int> detached_servers_;
  std::map<int, Sink> clients_;
  std::map<int, Placer> placers_;
  int next_client_id_ = 0;
};

}  // namespace pacer
