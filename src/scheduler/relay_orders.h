#pragma once

#include <cstdint>
#include <vector>

#include "ps/cluster/control_channel.h"
#include "ps/node/node.h"
#include "straggler/batch_tuning.h"

namespace pacer {

// The scheduler's orders to STRET's worker side (RelayLink, LinkProbe, BatchOrders), behind
// RelayControl, StretOrders and SmsOrders (whose batch shrink uses STRET's batch orders). Each
// waits for its answer, under the node's control mutex (one order at a time).
class RelayOrders {
 public:
  explicit RelayOrders(Node& node);

  // As RelayControl::Relay and RelayControl::Probe.
  void Relay(int straggler, int partner);
  void Withhold(int worker, bool withhold);
  // Each tuned worker runs batches of its size from its next iteration on, its gradients weighted
  // its weight x `weight_scale` (STRET's batch tuning). Sends every order at once and waits for
  // all the answers, so that the workers take their sizes at about the same iteration; the first
  // refusal is thrown, naming its worker.
  void TuneBatches(const std::vector<straggler::TunedBatch>& tuned, double weight_scale);
  // As RelayControl::Probe, or with `servers` its links to the servers, by server index.
  std::vector<double> Probe(int worker, int64_t bytes, bool servers = false);
  // Ends the order under way, and every later one, with an Error (the job is ending).
  void Cancel() { channel_.Cancel(); }

 private:
  // A RELAY_ORDER: through `partner` (-1: none), or withholding.
  void Order(int worker, int partner, bool withhold);

  Node& node_;
  ControlChannel channel_;
};

}  // namespace pacer
