#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ps/node/node.h"
#include "scheduler/allowed_batches.h"
#include "scheduler/batch_owner.h"
#include "scheduler/metrics_log.h"
#include "scheduler/order_queue.h"
#include "scheduler/relay_orders.h"
#include "scheduler/straggler_watch.h"
#include "scheduler/telemetry_intake.h"
#include "straggler/batch_tuning.h"
#include "straggler/stret_policy.h"

namespace pacer {

// The scheduler's side of STRET (--comm_policy=stret, STRAGGLERS.md section 6): at every iteration
// boundary it hands StretPolicy the communication stragglers the watch flagged, each worker's
// bandwidth to the servers (from its reports) and the worker-to-worker bandwidths its probes
// measured, and carries out the decisions: probes and relay orders, on a thread of its own, since
// each waits for a worker's answer. Training's progress, for the withholding, is the accuracy the
// application reports (GradientSync::ReportAccuracy); the batch tuning works from each worker's
// measured compute time per batch size and the sizes the application allows
// (GradientSync::AllowBatchSizes). Every decision, and how it went, goes to the log and the
// metrics log.
class StretOrders : public TelemetryObserver {
 public:
  static bool Wanted(const Node& node) { return node.config().comm_policy == "stret"; }

  StretOrders(Node& node, MetricsLog& metrics, const StragglerWatch& watch,
              const AllowedBatches& allowed, BatchOwner& owner);
  ~StretOrders() override;

  void OnIteration(int index, int rank, const IterationReport& report) override;
  void OnBoundary(int64_t iteration) override;
  // A lost worker is no partner, no straggler, and not among the tuned batches.
  void OnExclusion(int index) override;
  // Orders nothing more; an order under way ends at its deadline or with the job.
  void Stop();

  // Bytes each probe carries each way: enough that a slow link's transfer time dwarfs a message's
  // fixed cost, little enough (64 KiB per peer and way, once per straggler) that probing slow
  // links costs a fraction of an iteration.
  static constexpr int64_t kProbeBytes = 64 << 10;
  // Iteration reports whose median is a worker's bandwidth to the servers.
  static constexpr size_t kSamples = 5;
  // A relayed straggler's traffic goes to its partner, and a withheld one pushes no values: neither
  // measures its own links to the servers, so every this many iterations they are probed, and
  // the relay or the withholding ends once they recover (kProbeBytes each way per server).
  static constexpr int64_t kRecheckEvery = 10;

 private:
  struct Order {
    int64_t iteration;
    straggler::StretDecision decision;
    std::vector<straggler::BatchProfile> profiles;  // kBatchTune: as measured then
    int nominal_batch = 0;                          // kBatchTune: the size every worker runs
  };
  void Execute(const Order& order);
  // Probes relayed or withheld straggler `worker`'s links to the servers: their sum, as much as its
  // pushes would measure over all of them at once, replaces its bandwidth at the next boundary.
  void ProbeServerLinks(int worker, int64_t iteration);
  // kBatchTune: each worker's size and weight from the profiles and the sizes the workers allow.
  std::string TuneBatches(const Order& order);
  int RankOf(int worker) const { return worker < 0 ? -1 : node_.roles().WorkerRank(worker); }

  Node& node_;
  MetricsLog& metrics_;
  const StragglerWatch& watch_;
  const AllowedBatches& allowed_;
  BatchOwner& owner_;
  RelayOrders orders_;
  straggler::StretPolicy policy_;                     // the intake's thread only
  std::vector<std::deque<double>> server_bandwidth_;  // per worker: its last kSamples reports
  std::map<int64_t, double> accuracy_;  // by iteration: the accuracy a worker reported then
  // Per worker, compute seconds of its last kSamples iterations by batch size, and its pushes'.
  std::vector<std::map<int, std::deque<double>>> compute_s_;
  std::vector<std::deque<double>> push_s_;
  int full_batch_ = 0;      // the largest any worker reported
  std::set<int> excluded_;  // lost workers (the intake's thread)

  std::mutex mu_;
  std::map<std::pair<int, int>, double> peer_bandwidth_;  // probed: (lower, higher) index
  std::map<int, double> probed_server_links_;             // by worker: not yet in server_bandwidth_
  OrderQueue queue_;  // last: its thread runs orders that use the rest
};

}  // namespace pacer
