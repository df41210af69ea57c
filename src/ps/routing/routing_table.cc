#include "ps/routing/routing_table.h"

#include <glog/logging.h>

#include "pacer/error.h"

namespace pacer {

RoutingTable::RoutingTable(Cluster& cluster, Dispatcher& dispatcher)
    : cluster_(cluster),
      dispatcher_(dispatcher),
      table_(std::make_shared<Router>(cluster.roles().num_servers())) {
  dispatcher_.Take(proto::ROUTING_UPDATE, [this](Message&& msg) { OnUpdate(std::move(msg)); });
}

RoutingTable::~RoutingTable() { dispatcher_.Take(proto::ROUTING_UPDATE, nullptr); }

std::shared_ptr<const Router> RoutingTable::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_;
}

bool RoutingTable::Install(const Router& table) {
  std::lock_guard<std::mutex> lock(mu_);
  if (table.epoch() <= table_->epoch()) return false;
  table_ = std::make_shared<const Router>(table);
  return true;
}

void RoutingTable::Redirect(const proto::Meta& request, bool pushed) {
  Message reply = ReplyTo(request, cluster_.rank());
  reply.meta.set_redirect(true);
  reply.meta.set_pushed(pushed);
  reply.meta.set_routing(current()->Encode());
  cluster_.SendOrLog(request.sender(), reply);
}

void RoutingTable::OnUpdate(Message&& msg) {
  if (msg.meta.sender() != 0) {
    LOG(WARNING) << "rank " << cluster_.rank() << " dropped a routing table from rank "
                 << msg.meta.sender() << ": only the scheduler sends them";
    return;
  }
  try {
    Install(Router::Decode(msg.meta.routing(), cluster_.roles().num_servers()));
  } catch (const Error& e) {
    LOG(WARNING) << "rank " << cluster_.rank()
                 << " dropped a routing table from the scheduler: " << e.what();
    return;
  }
  dispatcher_.ForEachServer([&](const Dispatcher::Sink& server) {
    Message copy;
    copy.meta = msg.meta;
    server(std::move(copy));
  });
}

}  // namespace pacer
