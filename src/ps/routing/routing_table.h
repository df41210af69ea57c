#pragma once

#include <memory>
#include <mutex>

#include "ps/cluster/cluster.h"
#include "ps/cluster/dispatcher.h"
#include "ps/routing/router.h"

namespace pacer {

// The routing table this node knows. Tables are replaced by newer ones (a higher epoch), never
// changed, so a reader holds a snapshot as long as it needs. New tables come from the scheduler
// after a migration (ROUTING_UPDATE, which servers pass on to their KVServers: those may hold
// requests routed by it) and from servers that redirect a request.
class RoutingTable {
 public:
  // Takes the scheduler's ROUTING_UPDATE messages from `dispatcher`.
  RoutingTable(Cluster& cluster, Dispatcher& dispatcher);
  ~RoutingTable();
  RoutingTable(const RoutingTable&) = delete;
  RoutingTable& operator=(const RoutingTable&) = delete;

  std::shared_ptr<const Router> current() const;
  // Replaces the table when `table` is newer; returns whether it did.
  bool Install(const Router& table);

  // Answers `request` that this server does not own its keys, with the current table; `pushed`:
  // its push was applied, only the pull is to be resent.
  void Redirect(const proto::Meta& request, bool pushed);

 private:
  void OnUpdate(Message&& msg);

  Cluster& cluster_;
  Dispatcher& dispatcher_;
  mutable std::mutex mu_;
  std::shared_ptr<const Router> table_;
};

}  // namespace pacer
