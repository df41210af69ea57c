#include "pacer/relay_control.h"

#include <mutex>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/cluster/control_channel.h"
#include "ps/node/node.h"

namespace pacer {

class RelayOrders {
 public:
  explicit RelayOrders(Node& node)
      : node_(node), channel_(node.cluster(), node.dispatcher(), node.config().timeout_s) {}

  void Relay(int straggler, int partner) {
    RelayControl::Check(straggler, partner, node_.roles().num_workers());
    std::lock_guard<std::mutex> control(node_.control_mutex());
    Message order = channel_.Request(proto::RELAY_ORDER, node_.rank(), 0, channel_.Begin(1));
    order.meta.set_relay_partner(partner < 0 ? -1 : node_.roles().WorkerRank(partner));
    node_.transport().Send(node_.roles().WorkerRank(straggler), order, nullptr);
    const proto::Meta answer = channel_.Wait(StrCat("ordering worker ", straggler, " to relay"))[0];
    if (!answer.error().empty()) throw Error(answer.error());
  }

 private:
  Node& node_;
  ControlChannel channel_;
};

RelayControl::RelayControl(Session& session) {
  if (!session.is_scheduler()) {
    throw Error(StrCat("rank ", session.rank(), " is a ", RoleName(session.role()),
                       ": only the scheduler orders relays"));
  }
  orders_ = std::make_unique<RelayOrders>(NodeOf(session));
}

RelayControl::~RelayControl() = default;

void RelayControl::Relay(int straggler, int partner) { orders_->Relay(straggler, partner); }

void RelayControl::Check(int straggler, int partner, int num_workers) {
  if (straggler < 0 || straggler >= num_workers) {
    throw Error(StrCat("a relay order for worker ", straggler, ", but the job has ", num_workers,
                       " workers"));
  }
  if (partner < -1 || partner >= num_workers) {
    throw Error(StrCat("worker ", straggler, " ordered to relay through worker ", partner,
                       ", but the job has ", num_workers, " workers"));
  }
  if (partner == straggler) {
    throw Error(StrCat("worker ", straggler, " ordered to relay through itself"));
  }
}

}  // namespace pacer
