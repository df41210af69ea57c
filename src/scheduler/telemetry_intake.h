#pragma once

#include <cstdint>
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
};

// The scheduler's intake of telemetry: it takes the workers' iteration reports and the servers'
// service reports off the transport, checks who sent them, and hands them to its observers, in
// the order they were given. It also tells them of each iteration boundary, once every worker has
// reported the iteration. Observers run on the receiving thread, one report at a time.
class TelemetryIntake {
 public:
  TelemetryIntake(Node& node, std::vector<TelemetryObserver*> observers);
  ~TelemetryIntake();
  TelemetryIntake(const TelemetryIntake&) = delete;
  TelemetryIntake& operator=(const TelemetryIntake&) = delete;

 private:
  void OnReport(const Message& msg);

  Node& node_;
  const std::vector<TelemetryObserver*> observers_;
  std::mutex mu_;
  std::vector<int64_t> reported_;  // per worker: iterations reported
  int64_t boundary_ = 0;           // every worker has reported the iterations before it
};

}  // namespace pacer
