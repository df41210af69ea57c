#include "pacer/relay_control.h"

#include "common/str_cat.h"
#include "pacer/error.h"
#include "scheduler/relay_orders.h"

namespace pacer {

RelayControl::RelayControl(Node& node) {
  if (node.role() != Role::kScheduler) {
    throw Error(StrCat("rank ", node.rank(), " is a ", RoleName(node.role()),
                       ": only the scheduler orders relays"));
  }
  orders_ = std::make_unique<RelayOrders>(node);
}

RelayControl::~RelayControl() = default;

void RelayControl::Relay(int straggler, int partner) { orders_->Relay(straggler, partner); }

void RelayControl::Withhold(int worker, bool withhold) { orders_->Withhold(worker, withhold); }

std::vector<double> RelayControl::Probe(int worker, int64_t bytes) {
  return orders_->Probe(worker, bytes);
}

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
