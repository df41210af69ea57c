#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "ps/node/node.h"
#include "scheduler/allowed_batches.h"
#include "scheduler/batch_owner.h"
#include "scheduler/metrics_log.h"
#include "scheduler/mode_switch_coordinator.h"
#include "scheduler/order_queue.h"
#include "scheduler/relay_orders.h"
#include "scheduler/straggler_watch.h"
#include "scheduler/telemetry_intake.h"
#include "straggler/sync_chooser.h"

namespace pacer {

// STRN's --sync=auto (STRAGGLERS.md section 7). The job starts under bsp. After a few warm-up
// iterations the scheduler profiles it: --auto_window iterations at the full batch give each
// worker's iteration time (its compute and push, plus the part of the iteration every worker
// pays: the least total less busy time of the row), then every other worker runs half as many at
// half the batch (a batch order) so that the squared gradient norms at the two sizes, measured in
// the same iterations, give the gradient noise scale (norms taken in turn would shrink with
// training between the two, and bias it). The chooser
// (straggler/sync_chooser.h) predicts each mode's time to target from both; the job switches to the
// pick (ModeSwitchCoordinator) when it beats the mode in force by kGain. Afterwards, when the
// watch's worker stragglers change and the change holds for a window, the chooser decides again on
// that window's iterations, with the same margin against switching on noise. Every decision goes to
// the log and the metrics log with the chooser's table. A profile not complete within
// kProfileWindows windows of its start (workers that never all run the full batch, such as an
// application whose workers run batches of their own sizes) is abandoned: the job stays under bsp,
// the other policies get the batch sizes, and the log and the metrics log say so.
class SyncOrders : public TelemetryObserver {
 public:
  static bool Wanted(const Node& node) { return node.config().sync == "auto"; }
  // A pick must predict at most (1 - kGain) x the time of the mode in force.
  static constexpr double kGain = 0.1;
  // The profile needs a window of full batches and half a window of half ones.
  static constexpr int kProfileWindows = 3;

  SyncOrders(Node& node, MetricsLog& metrics, const StragglerWatch& watch,
             const AllowedBatches& allowed, BatchOwner& owner);
  ~SyncOrders() override;

  void OnIteration(int index, int rank, const IterationReport& report) override;
  void OnBoundary(int64_t iteration) override;
  // A lost worker: the profile and the rows go on over the workers left.
  void OnExclusion(int index) override;
  // Orders nothing more; an order under way ends with an Error.
  void Stop();

 private:
  enum class Phase { kWarmUp, kFullBatch, kHalfBatch, kChosen };
  struct Row {
    std::vector<double> busy_s, rest_s, norm2;
    std::vector<int64_t> batch;
  };

  // Sends `workers` batches of `batch` (a fraction `weight` of the full one).
  void OrderBatch(const std::vector<int>& workers, int batch, double weight);
  // The chooser's pick over `profile`, switched to where it gains enough (the queue's thread).
  void Decide(int64_t iteration, const straggler::SyncProfile& profile, const char* why);
  // A profile of the rows kept, with the noise scale measured.
  straggler::SyncProfile Profile() const;
  // The profile is over: regime changes are watched from the stragglers flagged now.
  void EnterChosen(int64_t iteration);
  // Gives up a profile past its deadline: bsp stays, and the batch sizes go back to the workers.
  void AbandonProfile(int64_t iteration);
  // The workers the job has not gone on without, by index.
  std::vector<int> Live() const;

  Node& node_;
  MetricsLog& metrics_;
  const StragglerWatch& watch_;
  const AllowedBatches& allowed_;
  BatchOwner& owner_;
  const int window_;
  const straggler::SyncChooserOptions options_;
  RelayOrders orders_;
  ModeSwitchCoordinator coordinator_;
  // The intake's thread only:
  Phase phase_ = Phase::kWarmUp;
  int64_t profile_deadline_ = 0;    // the boundary by which the profile must be complete
  int full_ = 0, half_ = 0;         // batch sizes
  std::map<int64_t, Row> pending_;  // rows not yet at their boundary
  std::deque<Row> rows_;            // the last `window_` full-batch rows
  // The squared gradient norms summed over the noise phase's iterations, at half and at the full
  // batch, and how many of each.
  double norm_half_ = 0, norm_full_ = 0;
  int64_t counted_half_ = 0, counted_full_ = 0;
  double noise_scale_ = 0;
  std::set<int> regime_, seen_;         // worker stragglers when last decided; as last seen
  std::set<int> flagged_before_noise_;  // worker stragglers as the full-batch rows ended
  int64_t seen_since_ = 0;              // the boundary from which `seen_` held
  std::string mode_ = "bsp";            // the queue's thread only
  mutable std::mutex excluded_mu_;
  std::set<int> excluded_;  // lost workers (the intake's thread writes, the queue's reads)
  OrderQueue queue_;        // last: its thread runs orders that use the rest
};

}  // namespace pacer
