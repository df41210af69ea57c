#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ps/messages/telemetry.h"
#include "ps/node/node.h"

namespace pacer {

// What the scheduler's parts learn from the job's reports (see TelemetryIntake).
class TelemetryObserver {
 public:
  virtual ~TelemetryObserver() = default;
  // Worker `index` (rank `rank`) finished an iteration.
  virtual void OnIteration(int index, int rank, const IterationReport& report) {}
  // Server `index` (rank `rank`) reported its service over the last interval.
  virtual void OnServerReport(int index, int rank, const ServerReport& report) {}
  // Every worker has reported `iteration` (boundaries come in order, each once).
  virtual void OnBoundary(int64_t iteration) {}
  // The job goes on without worker `index` (lost): boundaries no longer wait for it, and it
  // reports no more. Before the boundaries its exclusion releases.
  virtual void OnExclusion(int index) {}
};

// The scheduler's intake of telemetry: it takes the workers' iteration reports and the servers'
// service reports off the transport, checks who sent them, and hands them to its observers, in
// the order they were given. It also tells them of each iteration boundary, once every worker has
// reported the iteration, and of each worker the job goes on without (Cluster::SurviveLosses):
// the boundaries then follow the workers left. Observers run one report or exclusion at a time,
// on the receiving thread (exclusions: the liveness thread).
class TelemetryIntake {
 public:
  TelemetryIntake(Node& node, std::vector<TelemetryObserver*> observers);
  ~TelemetryIntake();
  TelemetryIntake(const TelemetryIntake&) = delete;
  TelemetryIntake& operator=(const TelemetryIntake&) = delete;

  // The job goes on without worker `index`: the cluster's exclusions call it (once or more).
  void Exclude(int index);

 private:
  void OnReport(const Message& msg);
  // Tells the observers of the last boundary the workers not excluded have passed, if new.
  void AdvanceBoundary();

  Node& node_;
  const std::vector<TelemetryObserver*> observers_;
  std::mutex mu_;
  std::vector<int64_t> reported_;     // per worker: iterations reported
  std::vector<bool> excluded_;        // per worker
  int64_t boundary_ = 0;              // every worker left has reported the iterations before it
  std::shared_ptr<void> exclusions_;  // last: dropped first
};

}  // namespace pacer
