#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "ps/cluster/control_channel.h"

namespace pacer {

class Node;

// STRET's link probes (STRAGGLERS.md section 6): a relay partner is chosen by its link to the
// straggler, which no gradient traffic measures. Once the scheduler flags a communication
// straggler it asks it to probe (LINK_PROBE); the straggler sends each other worker (or each
// server, for a relayed straggler's own link: `probe_servers`), one at a time, a probe of the
// asked size, which comes back whole (PROBE_ECHO), and answers with each link's round-trip bytes
// per second (2 x size over the round trip: a relay's gradients go one
// way and its parameters the other). The probes run at once, on a thread of their own beside
// training, so that the relay can start an iteration sooner; each waits at most a bounded time,
// and one that does not come back counts as no bandwidth.
class LinkProbe {
 public:
  explicit LinkProbe(Node& node);
  ~LinkProbe();
  LinkProbe(const LinkProbe&) = delete;
  LinkProbe& operator=(const LinkProbe&) = delete;

  // Most bytes one probe may carry each way, and longest wait for one.
  static constexpr int64_t kMaxProbeBytes = int64_t{16} << 20;
  static constexpr double kProbeTimeoutS = 2;

 private:
  void OnOrder(Message&& msg);
  void OnEcho(Message&& msg);
  void Run();
  void Probe(const proto::Meta& order);

  Node& node_;
  ControlChannel channel_;  // the echoes, with the probes' own deadline
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<proto::Meta> orders_;  // the scheduler's requests not yet answered
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once the rest is in place
};

}  // namespace pacer
