#pragma once

#include <vector>

#include "straggler/load_plan.h"

namespace pacer {
namespace straggler {

struct SasOptions {
  // Act when the slowest server's time per iteration (load / capacity) is above this multiple of
  // the capacity-proportional ideal (total load / total capacity). Fair shares of equal servers
  // give 1; one server at 1/3 of four about 2.5.
  double imbalance = 1.15;
  // A plan must shorten the slowest server's time by at least this fraction, so noise in the
  // measured capacities does not move ranges back and forth.
  double min_gain = 0.1;
};

struct SasDecision {
  std::vector<RangeMove> moves;  // empty: balanced enough, or too little to gain
  double imbalance = 1;          // the slowest server's time over the ideal, now
  double planned = 1;            // and after the moves
};

// SAS's decision (STRAGGLERS.md section 3), as pure logic: from each range's measured load and
// each server's measured service time per byte, whether to move ranges and which. A server's
// capacity is 1 / (seconds per byte); an unmeasured one (0) counts as the median server. The moves
// are PlanLoad's: greedy, from the slowest server to the one that would finish soonest, until
// shares are as close to capacity-proportional as the ranges allow. With the straggler recovered,
// the same rule lets load flow back.
class SasPolicy {
 public:
  explicit SasPolicy(const SasOptions& options = {}) : options_(options) {}

  // Throws std::invalid_argument for a negative service time or a range owned by a server
  // outside `seconds_per_byte`.
  SasDecision Decide(const std::vector<KeyRangeLoad>& ranges,
                     const std::vector<double>& seconds_per_byte) const;

  // The slowest server's time over the ideal, as Decide judges it.
  static double Imbalance(const std::vector<KeyRangeLoad>& ranges,
                          const std::vector<double>& capacity);
  static std::vector<double> Capacities(const std::vector<double>& seconds_per_byte);

 private:
  SasOptions options_;
};

}  // namespace straggler
}  // namespace pacer
