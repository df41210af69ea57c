#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "ps/messages/telemetry.h"
#include "straggler/sas_policy.h"

namespace pacer {

// The scheduler's measurements for SasPolicy (--balance=sas): each server's service time per
// byte and each key range's load, from the servers' reports. Where a server's bandwidth is known
// (--server_bandwidth), the worse of the two resources judges it (STRAGGLERS.md section 3). A
// server's time per byte is the median of its last few reports that carried enough work to judge it
// (one odd interval does not move ranges, two in a row do); a range's load is a decaying sum of the
// bytes pushed to it, so it follows demand whichever server owns the range.
class SasBalancer {
 public:
  // `bandwidth`: bytes per second per server, 0 where unknown (empty: none known).
  SasBalancer(int num_servers, int num_ranges, std::vector<double> bandwidth = {},
              const straggler::SasOptions& options = {});

  // A server's report; one whose range bytes do not match the table is ignored (returns false).
  bool Observe(int server, const ServerReport& report);
  // At an iteration boundary: what to move now, given each range's owner.
  straggler::SasDecision Decide(const std::vector<int>& owners);

  // A report judges a server's speed when it carried at least this much work (16 requests'
  // worth: fewer say more about a request's fixed cost than about the server).
  static constexpr int64_t kMinWorkBytes = int64_t{1} << 20;
  // Reports whose median is a server's time per byte.
  static constexpr size_t kSamples = 3;
  // Per boundary, the weight the loads measured before it keep: about the last 20 iterations
  // count. Reports do not line up with boundaries, so one boundary's bytes per range are off by
  // a push or two; a shorter memory let that noise pass the imbalance threshold in S6.
  static constexpr double kLoadDecay = 0.95;
  // The first boundaries' bytes are dropped: the first iterations fault their pages in and leave
  // some servers' pushes in later reports, so that balanced servers look unbalanced.
  static constexpr int kWarmupBoundaries = 3;
  // Then loads are measured over this many boundaries before the first decision.
  static constexpr int kMeasuredBoundaries = 5;

 private:
  straggler::SasPolicy policy_;
  std::vector<double> bandwidth_;                     // per server; 0: unknown
  std::vector<std::deque<double>> seconds_per_byte_;  // per server: the last kSamples
  std::vector<double> load_;                          // per range: decaying bytes
  std::vector<double> pending_;                       // per range: bytes since the last boundary
  int boundaries_ = 0;
};

}  // namespace pacer
