// SyncEngine's groups rule (SyncMode::Kind::kGroups, sync_engine.h): each group resolves its
// clocks as BSP does over its members, while groups resolve on their own; the key's `complete` is
// the slowest group's. A group's update is its part of BSP's: its members' weighted gradients over
// the job's live workers (EPSP divides each push by all the job's workers; BSP's mean after a loss
// covers those left, and so does this). Divided by the group's own weight instead, a
// group of one slow worker on a tuned small batch applies full steps from its few samples: the
// job trains as if at a learning rate several times its own (docs/STRAGGLERS.md has the runs).
#include <algorithm>
#include <limits>

#include "server/sync_engine.h"

namespace pacer {
namespace {

// Where a group's sum of a clock lives in KeyState::aggregates: one slot per group and clock,
// ordered by clock.
int64_t Slot(const KeyState& k, int group, int64_t clock) {
  return clock * static_cast<int64_t>(k.mode.groups.size()) + group;
}

}  // namespace

void SyncEngine::AccumulateInGroup(KeyState& k, const Gradient& g) {
  Aggregate& a = k.aggregates[Slot(k, k.mode.GroupOf(g.worker), g.clock)];
  a.count += 1 + static_cast<int>(g.relayed.size());  // relayed workers: the same group (Check)
  a.weight += g.weight;
  if (g.values.size() > 0) Add(k, a, g.values);
  ResolveGroups(k);
}

int SyncEngine::LiveWorkers() const {
  if (!any_excluded_) return num_workers_;  // each resolved clock asks: spare the scan
  // At least one: the last worker's exclusion may come after pushes that still resolve a clock.
  return std::max(
      1, num_workers_ - static_cast<int>(std::count(excluded_.begin(), excluded_.end(), true)));
}

int SyncEngine::NeededInGroup(const KeyState& k, int group, int64_t clock) const {
  // As Needed: an excluded worker's push counts where it came before the exclusion.
  int needed = 0;
  for (int w : k.mode.groups[static_cast<size_t>(group)]) {
    needed += !excluded_[w] || k.arrived[w] >= clock;
  }
  return needed;
}

void SyncEngine::ResolveGroups(KeyState& k) {
  int64_t slowest = std::numeric_limits<int64_t>::max();
  for (int group = 0; group < static_cast<int>(k.group_complete.size()); ++group) {
    int64_t& complete = k.group_complete[static_cast<size_t>(group)];
    for (auto it = k.aggregates.find(Slot(k, group, complete));
         it != k.aggregates.end() && it->second.count >= NeededInGroup(k, group, complete);
         it = k.aggregates.find(Slot(k, group, complete))) {
      const Aggregate& done = it->second;
      if (done.weight > 0) {
        Update(k, done.summed == 1 ? done.first.as<float>() : done.sum_data, 1.0 / LiveWorkers(),
               complete);
      }
      k.applied += done.count;
      ++complete;
      k.aggregates.erase(it);
    }
    // A group whose every worker was excluded holds no one back.
    if (NeededInGroup(k, group, complete) > 0) slowest = std::min(slowest, complete);
  }
  if (slowest != std::numeric_limits<int64_t>::max()) k.complete = slowest;
}

}  // namespace pacer
