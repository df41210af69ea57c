#pragma once

#include <functional>
#include <vector>

namespace pacer {
namespace straggler {

struct RelayPair {
  int straggler;
  int partner;
  double weight;
};

// STRET's pairing of communication stragglers with relay partners (STRAGGLERS.md section 6): a
// maximum-weight matching of `stragglers` to `partners`, where `weight(s, p)` is what relaying
// s through p is worth (0 or less: not a candidate) and each partner takes at most
// `per_partner` stragglers. Stragglers no partner is worth anything to stay unmatched. The
// Hungarian method over stragglers x partner slots, O(s^2 (p x per_partner + s)): exact, and cheap
// for the simulator's thousands of workers, where stragglers are few. Returns the pairs in the
// order of `stragglers`. Throws std::invalid_argument for per_partner < 1 or an index in both
// lists.
std::vector<RelayPair> MatchRelays(const std::vector<int>& stragglers,
                                   const std::vector<int>& partners,
                                   const std::function<double(int, int)>& weight,
                                   int per_partner = 1);

}  // namespace straggler
}  // namespace pacer
