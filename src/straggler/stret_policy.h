#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace pacer {
namespace straggler {

struct StretOptions {
  int relays_per_partner = 1;  // stragglers one partner may relay for
  // A relay must promise the straggler this many times its direct bandwidth to the servers
  // (through the partner: the link to it, then the partner's link to the servers).
  double relay_gain = 1.25;
  // Iterations after a step before it is judged: a straggler still flagged then escalates.
  int settle_iterations = 3;
  int withhold_every = 100;          // iterations between progress checks
  double withhold_threshold = 0.01;  // accuracy points per iteration, below which to withhold
  // A straggler's link has recovered once its direct bandwidth is within this factor of the
  // median worker's (the detector's transfer ratio).
  double recovered_ratio = 1.5;
};

// What the scheduler knows at an iteration boundary.
struct StretObservation {
  int64_t iteration = 0;
  int num_workers = 0;
  std::set<int> communication;  // the detector's communication stragglers (kCommunication, kBoth)
  std::set<int> compute;        // and its compute stragglers (kCompute, kBoth)
  // Per worker, the bytes per second it achieved to and from the servers (real traffic, or a
  // probe while it relays); 0: not measured.
  std::vector<double> server_bandwidth;
  // Probed worker-to-worker bandwidths in bytes per second, keyed (lower index, higher index).
  std::map<std::pair<int, int>, double> peer_bandwidth;
  // Accuracy points gained per iteration over the last withhold_every iterations, as the
  // application reported them; none where it reports nothing.
  std::optional<double> progress;
  // Another policy holds the workers' batch sizes (STRN's profile): the tuning waits.
  bool batches_held = false;
  // Workers the job went on without (lost): no partner, no straggler, no measure of theirs.
  std::set<int> excluded;
};

struct StretDecision {
  // kProbe: measure the straggler's bandwidth to every other worker (bounded probes), which the
  // relay choice needs. kBatchTune: once for the job, from the workers' batch profiles.
  enum class Kind { kProbe, kRelay, kEndRelay, kWithhold, kEndWithhold, kBatchTune };
  Kind kind;
  int straggler;
  int partner = -1;  // kRelay, kEndRelay
  std::string reason;
};

const char* StretKindName(StretDecision::Kind kind);

// STRET's escalation for each straggler (STRAGGLERS.md section 6), as pure logic: a communication
// straggler is relayed through a partner (a maximum-weight matching over all of them, see
// MatchRelays); if that did not clear it, or no partner helps, its gradients are withheld at the
// next progress check that finds training gaining less than the threshold; if they are not
// withheld, the batch sizes are tuned, once. A compute straggler, which a relay cannot help, goes
// straight to the batch tuning. A relay whose partner becomes a straggler moves to another
// partner; a relay or a withholding ends when the straggler's link recovers.
class StretPolicy {
 public:
  explicit StretPolicy(const StretOptions& options = {});

  // The decisions at this boundary, in order (ends before starts). Throws std::invalid_argument
  // for a straggler or a bandwidth of a worker outside num_workers.
  std::vector<StretDecision> Decide(const StretObservation& observation);

  // Where a straggler stands, for the metrics log and tests: its partner, or -1.
  int PartnerOf(int straggler) const;
  bool Withheld(int straggler) const;
  bool BatchTuned() const { return batch_tuned_; }

 private:
  // kNoRelay: no partner helps, or the relay did not clear it; kKept: progress too fast to
  // withhold it (the batch tuning is then its step).
  enum class Step { kFlagged, kProbing, kRelaying, kNoRelay, kWithholding, kKept };
  struct Straggler {
    Step step = Step::kFlagged;
    int partner = -1;
    int64_t since = 0;  // the iteration the step began
  };

  bool Recovered(const StretObservation& o, int worker) const;
  void EndSteps(const StretObservation& o, std::vector<StretDecision>* out);
  void Relay(const StretObservation& o, std::vector<StretDecision>* out);
  void Escalate(const StretObservation& o, std::vector<StretDecision>* out);

  StretOptions options_;
  std::map<int, Straggler> stragglers_;
  std::map<int, int64_t> compute_flagged_;  // compute stragglers, by the iteration first flagged
  bool batch_tuned_ = false;
};

}  // namespace straggler
}  // namespace pacer
