#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "pacer/buffer.h"
#include "pacer/sync_mode.h"
#include "pacer/types.h"
#include "server/parameter_state.h"

namespace pacer {

// One worker's gradient for one key.
struct Gradient {
  int worker = 0;       // role index, 0..num_workers-1
  int64_t clock = 0;    // the worker's iteration
  int64_t version = 0;  // updates applied to the values it was computed on
  // The values are weight x the gradient. A once-per-iteration update divides their sum by the
  // total weight; an on-arrival one applies them as they are (weight 1: the gradient itself).
  double weight = 1;
  // Floats, as many as the key holds; or none, with weight 0: a worker that withholds its
  // gradient (STRET) still resolves its clock.
  Buffer values;
  // Workers whose gradients of the same clock this one carries, summed into its values and weight
  // (a STRET relay: `worker` pushes for them). Each counts as if it had pushed.
  std::vector<int> relayed;
};

// One clock's gradients of a key under a once-per-iteration rule, until the clock resolves.
struct Aggregate {
  Buffer first;  // a lone gradient is used as it came, without a copy
  Buffer sum;    // two or more: their sum
  float* sum_data = nullptr;
  int count = 0;   // workers whose gradients came
  int summed = 0;  // values added: 0 (all withheld), 1 (`first`) or more (`sum`)
  double weight = 0;
};

// A pull waiting for its keys to be ready for a worker starting `clock` (SyncEngine::Pull).
struct WaitingPull {
  std::vector<Key> keys;
  int64_t clock;
  std::function<void()> serve;
  int worker;  // the pulling worker's index, or -1
  bool after_own_push;
  std::function<void()> redirect;
  bool cancelled = false;
};

// A key's place in the synchronization rule of its server shard (SyncEngine): its values and
// optimizer state, its clocks, the sums of clocks not yet resolved, the gradients a mode switch
// holds, and the pulls that wait for it.
struct KeyState {
  std::unique_ptr<ParameterState> params;
  int64_t version = 0;
  int64_t complete = 0;
  std::vector<int64_t> last_clock;  // per worker, applied or dropped; -1 before its first push
  std::vector<int64_t> arrived;     // per worker, the last clock pushed (held ones included)
  std::map<int64_t, Aggregate> aggregates;
  std::vector<Gradient> held;
  size_t switches_done = 0;
  SyncMode mode;
  // Under kGroups, each group's first clock not resolved (`complete` is the slowest group's).
  std::vector<int64_t> group_complete;
  int64_t applied = 0;
  int64_t dropped = 0;
  int64_t pushes = 0;
  std::vector<std::shared_ptr<WaitingPull>> waiters;

  // Follows `next` from the completed clock on.
  void SetMode(const SyncMode& next) {
    mode = next;
    group_complete.assign(next.kind == SyncMode::Kind::kGroups ? next.groups.size() : 0, complete);
  }
};

}  // namespace pacer
