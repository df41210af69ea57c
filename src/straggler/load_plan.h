#pragma once

#include <cstdint>
#include <vector>

namespace pacer {
namespace straggler {

// SAS's load reassignment for server stragglers (STRAGGLERS.md section 3), as pure logic. The
// unit of load is a key range; a server's capacity is what it can serve per second (measured:
// 1 / service time per byte, or known).
struct KeyRangeLoad {
  int range;    // the range's id
  double load;  // bytes per iteration (pushes and pulls)
  int server;   // its owner now
};

struct RangeMove {
  int range;
  int from;
  int to;
  double load;
};

// Initial placement: ranges by decreasing load, each onto the server with the least load so far
// (ties: the lower index). Returns the owner of each range, indexed like `loads`.
std::vector<int> PlaceLargestFirst(const std::vector<double>& loads, int servers);

// Moves that bring each server's share of the load toward its share of the capacity, so that
// all finish an iteration at about the same time. Greedy: the slowest server (load / capacity)
// hands its largest range that another server would finish sooner than the slowest does now, to
// the server that would finish it soonest; repeat until no move shortens the slowest. A range
// never moves where it would make things worse (no overshoot), so the plan can only be as fine as
// the ranges: split large tensors. Servers with no load take load like any other; with equal
// capacities again, the same plan lets load flow back. Servers of capacity 0 only give.
std::vector<RangeMove> PlanLoad(const std::vector<KeyRangeLoad>& ranges,
                                const std::vector<double>& capacity);

// Each server's load after applying `moves` to `ranges`.
std::vector<double> LoadAfter(const std::vector<KeyRangeLoad>& ranges,
                              const std::vector<RangeMove>& moves, int servers);

}  // namespace straggler
}  // namespace pacer
