#include "scheduler/relay_orders.h"

#include <mutex>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "pacer/relay_control.h"

namespace pacer {

RelayOrders::RelayOrders(Node& node)
    : node_(node), channel_(node.cluster(), node.dispatcher(), node.config().timeout_s) {}

void RelayOrders::Relay(int straggler, int partner) { Order(straggler, partner, false); }

void RelayOrders::Withhold(int worker, bool withhold) { Order(worker, -1, withhold); }

void RelayOrders::Order(int worker, int partner, bool withhold) {
  RelayControl::Check(worker, partner, node_.roles().num_workers());
  std::lock_guard<std::mutex> control(node_.control_mutex());
  Message order = channel_.Request(proto::RELAY_ORDER, node_.rank(), 0, channel_.Begin(1));
  order.meta.set_relay_partner(partner < 0 ? -1 : node_.roles().WorkerRank(partner));
  order.meta.set_withhold(withhold);
  node_.transport().Send(node_.roles().WorkerRank(worker), order, nullptr);
  const proto::Meta answer =
      channel_.Wait(StrCat("ordering worker ", worker, withhold ? " to withhold" : " to relay"))[0];
  if (!answer.error().empty()) throw Error(answer.error());
}

void RelayOrders::TuneBatches(const std::vector<straggler::TunedBatch>& tuned,
                              double weight_scale) {
  if (tuned.empty()) return;
  for (const straggler::TunedBatch& t : tuned) {
    RelayControl::Check(t.worker, -1, node_.roles().num_workers());
  }
  std::lock_guard<std::mutex> control(node_.control_mutex());
  const int64_t exchange = channel_.Begin(static_cast<int>(tuned.size()));
  for (const straggler::TunedBatch& t : tuned) {
    Message order = channel_.Request(proto::BATCH_ORDER, node_.rank(), 0, exchange);
    order.meta.set_batch_size(t.batch);
    order.meta.set_weight(t.weight * weight_scale);
    order.meta.set_skip_unchanged(t.skip_unchanged);
    node_.transport().Send(node_.roles().WorkerRank(t.worker), order, nullptr);
  }
  for (const proto::Meta& answer :
       channel_.Wait(StrCat("ordering ", tuned.size(), " workers to tune their batches"))) {
    if (!answer.error().empty()) throw Error(answer.error());
  }
}

std::vector<double> RelayOrders::Probe(int worker, int64_t bytes, bool servers) {
  const int workers = node_.roles().num_workers();
  if (worker < 0 || worker >= workers) {
    throw Error(
        StrCat("a probe of worker ", worker, "'s links, but the job has ", workers, " workers"));
  }
  std::lock_guard<std::mutex> control(node_.control_mutex());
  Message order = channel_.Request(proto::LINK_PROBE, node_.rank(), 0, channel_.Begin(1));
  order.meta.set_probe_bytes(bytes);
  order.meta.set_probe_servers(servers);
  node_.transport().Send(node_.roles().WorkerRank(worker), order, nullptr);
  const proto::Meta answer =
      channel_.Wait(StrCat("asking worker ", worker, " to probe its links"))[0];
  if (!answer.error().empty()) throw Error(answer.error());
  const int ends = servers ? node_.roles().num_servers() : node_.roles().num_workers();
  if (answer.link_bandwidth_size() != ends) {
    throw Error(StrCat("worker ", worker, " answered a probe with ", answer.link_bandwidth_size(),
                       " bandwidths, but the job has ", ends, servers ? " servers" : " workers"));
  }
  return {answer.link_bandwidth().begin(), answer.link_bandwidth().end()};
}

}  // namespace pacer
