#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pacer/buffer.h"
#include "pacer/reducer.h"
#include "pacer/sync_mode.h"
#include "pacer/types.h"
#include "server/key_state.h"
#include "server/key_state_codec.h"
#include "server/parameter_state.h"

namespace pacer {

// Where a key stands, for tests and telemetry.
struct KeyStatus {
  int64_t version = 0;   // updates applied
  int64_t complete = 0;  // clocks resolved (see SyncEngine)
  int64_t applied = 0;   // gradients that went into an update
  int64_t dropped = 0;   // gradients dropped as stale (backup workers)
  int64_t pushes = 0;    // pushes that arrived (a relayed one carries several gradients)
  size_t held = 0;       // gradients waiting for a mode switch
  SyncMode mode;
};

// The server's update engine for the keys of one shard: parameters, optimizer state, and each
// key's place in the synchronization rule of STRAGGLERS.md section 2. Pure logic over a Reducer:
// no threads and no transport (the caller serializes calls, as a server shard does), so every rule
// is tested directly.
//
// Clocks: a key's `complete` clock is the first clock not yet resolved. Once-per-iteration modes
// (BSP, backup) resolve clock t when they apply its update; on-arrival modes when every worker has
// pushed clock t. A pull for clock c is served when the rule allows a worker to start iteration c:
// BSP, backup and EPSP(0) once complete >= c, SSP(s) and EPSP(s) once complete >= c - s, the
// others at once. Under groups each group resolves its clocks as BSP does over its members (its
// part of BSP's update: its sum over the job's live workers), and `complete` is the slowest
// group's: a worker's pull waits for its group's clock c - 1 and for complete >= c - s.
//
// Switching: PrepareSwitch returns the first clock this engine has not seen and holds pushes from
// it on; CommitSwitch(mode, T) with T at least every engine's answer makes clocks < T follow the
// old rule and clocks >= T the new one. Each key changes mode once it has resolved clock T - 1;
// until then its pushes of clocks >= T wait, and pulls for those clocks too. No gradient is lost
// or applied twice.
class SyncEngine {
 public:
  struct Options {
    int num_workers = 1;
    SyncMode mode;
    OptimizerSpec optimizer;
  };

  SyncEngine(const Options& options, Reducer& reducer, ParameterState::Allocator allocate);

  // Sets a key's first values (the job's: worker 0's). Throws Error if the key has them already.
  void Init(Key key, int worker, const float* values, size_t count);
  // Applies or holds a gradient by the rule in force for its clock. Throws Error naming the key,
  // worker and clocks or sizes for a gradient no rule accepts: an unknown key, a wrong length, a
  // clock not above the worker's last, a version from the future, a relayed worker out of range,
  // excluded, repeated or the pusher itself. A relayed gradient counts as one per worker it
  // carries: a clock's update waits for workers, not messages, and weight alone cannot tell
  // (under tasks a worker that computed none pushes weight 0 and still ends its clock).
  void Push(Key key, const Gradient& gradient);
  // Throws what Push would for `gradient`, changing nothing (to check a request before applying
  // any of it).
  void Check(Key key, const Gradient& gradient) const;
  // Calls `serve` (once) when every key is ready for `worker` (its index; -1 for a pull of no
  // worker's, which waits as for the slowest) starting `clock`: now, or from the Init, Push or
  // CommitSwitch that makes them so. With `after_own_push`, also not before that worker's push of
  // clock - 1 has arrived. If a key moves away first (Export), `redirect` runs instead.
  void Pull(std::vector<Key> keys, int64_t clock, std::function<void()> serve, int worker = -1,
            bool after_own_push = false, std::function<void()> redirect = nullptr);

  // Goes on without `worker` (lost; Cluster::SurviveLosses): clocks resolve once the others
  // pushed, its later pushes are refused, and pulls that waited only for it are served. A clock's
  // update keeps what it pushed before, and divides by the weight that came (BSP's mean over the
  // live workers). Throws Error for worker 0, whose values the job started from.
  void Exclude(int worker);

  int64_t PrepareSwitch();
  // Throws Error if `first_clock` is below the prepared clock or the mode does not fit the job;
  // the prepared switch is then abandoned and the old mode goes on.
  void CommitSwitch(const SyncMode& mode, int64_t first_clock);

  // Migration (SAS): removes the keys `moving` selects and returns each one's whole state (values,
  // optimizer state, clocks, partial sums, held gradients) as a record. Pulls waiting on any of
  // them are cancelled: their `redirect` runs instead of `serve`, so the worker asks the new owner.
  using KeyRecord = std::pair<Key, Buffer>;  // a key and its state (RequestShards::MovedKey)
  std::vector<KeyRecord> Export(const std::function<bool(Key)>& moving);
  // Installs a record made by Export (of an engine of the same job and switch history). Throws
  // Error naming the key for a record that is malformed or of a key this engine already holds.
  void Import(Key key, const Buffer& state);

  // Checkpoints (GradientSync::Checkpoint): what resumes a key: its values, optimizer state,
  // version and completed clock. Only between iterations: throws Error naming the key and clocks
  // while a gradient of the completed clock or a later one is in the engine, which a checkpoint
  // would lose.
  Buffer Checkpoint(Key key) const;
  // Installs a key's checkpoint as its first values (Init's part when a job resumes): every
  // worker's next push is of the completed clock. Throws Error naming the key for a record that
  // is malformed or a key that has values.
  void Resume(Key key, const Buffer& record);

  // Every key this engine holds values for.
  std::vector<Key> Keys() const;

  // The key's current values, or null if it has none yet.
  const Buffer* Values(Key key) const;
  KeyStatus Status(Key key) const;

 private:
  struct Switch {
    SyncMode mode;
    int64_t first_clock;
  };

  const KeyState& Find(Key key, const Gradient& g) const;
  // Throws Error unless `clock` is above the last one `worker` pushed (`pusher` pushed it).
  void CheckClock(Key key, const KeyState& k, int pusher, int worker, int64_t clock) const;
  bool Holds(const KeyState& k, int64_t clock) const;
  bool Ready(const KeyState& k, int64_t clock, int worker) const;
  void Process(KeyState& k, const Gradient& g);
  void Accumulate(KeyState& k, const Gradient& g);
  // Adds a gradient's values to a clock's sum.
  void Add(const KeyState& k, Aggregate& a, const Buffer& values);
  void ApplyOnArrival(KeyState& k, const Gradient& g);
  // The pushes that resolve `clock` under a once-per-iteration rule.
  int Needed(const KeyState& k, int64_t clock) const;
  // Applies the clocks that have every push they need, in order.
  void ResolveOnceComplete(KeyState& k);
  // The first clock a live worker has not pushed.
  void ResolveOnArrivalComplete(KeyState& k);
  // The groups rule (sync_engine_groups.cc): a gradient into its group's sum of its clock, and
  // each group's clocks applied once their live members pushed.
  void AccumulateInGroup(KeyState& k, const Gradient& g);
  void ResolveGroups(KeyState& k);
  int LiveWorkers() const;
  int NeededInGroup(const KeyState& k, int group, int64_t clock) const;
  // The optimizer's step with the learning rate of `clock` (the gradient's iteration).
  void Update(KeyState& k, const float* grad, double grad_scale, int64_t clock);
  // Carries out the switches the key has reached and replays what they held; then serves the
  // pulls that became ready.
  void Advance(KeyState& k);
  void Wake(KeyState& k);
  void Wait(const std::shared_ptr<WaitingPull>& pull);
  void CheckMode(const SyncMode& mode) const;
  // Advances every key (after a commit or an abandoned switch).
  void ReleaseAll();

  const int num_workers_;
  const OptimizerSpec optimizer_;
  Reducer& reducer_;
  const ParameterState::Allocator allocate_;
  const KeyStateCodec codec_;
  SyncMode mode_;
  std::unordered_map<Key, KeyState> keys_;
  std::vector<Switch> switches_;
  std::optional<int64_t> fence_;  // between PrepareSwitch and CommitSwitch
  int64_t max_clock_seen_ = -1;
  std::vector<bool> excluded_;  // by worker
  bool any_excluded_ = false;   // spares the pushes a scan of excluded_ while none is
};

}  // namespace pacer
