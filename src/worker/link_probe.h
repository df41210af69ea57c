#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "ps/cluster/control_channel.h"

namespace pacer {

class Node;

// STRET's worker-to-worker probes (STRAGGLERS.md section 6): a relay partner is chosen by its link
// to the straggler, which no gradient traffic measures. Once the scheduler flags a communication
// straggler it asks it to probe (LINK_PROBE); the straggler sends each other worker, one at a
// time, a probe of the asked size, which comes back whole (PROBE_ECHO), and answers with each
// link's round-trip bytes per second. The probes run at the start of an iteration, when the
// worker's own transfers are done, so that they measure the links and not its queue; each waits
// at most a bounded time, and one that does not come back counts as no bandwidth.
class LinkProbe {
 public:
  explicit LinkProbe(Node& node);
  ~LinkProbe();
  LinkProbe(const LinkProbe&) = delete;
  LinkProbe& operator=(const LinkProbe&) = delete;

  // Runs the probes the scheduler asked for since the last call, if any, and answers it.
  void BeginIteration();

  // Most bytes one probe may carry each way, and longest wait for one.
  static constexpr int64_t kMaxProbeBytes = int64_t{16} << 20;
  static constexpr double kProbeTimeoutS = 2;

 private:
  void OnOrder(Message&& msg);
  void OnEcho(Message&& msg);

  Node& node_;
  ControlChannel channel_;  // the echoes, with the probes' own deadline
  std::mutex mu_;
  std::optional<proto::Meta> order_;  // the scheduler's request not yet answered
};

}  // namespace pacer
