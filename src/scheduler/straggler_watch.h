#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "ps/node/node.h"
#include "scheduler/metrics_log.h"
#include "scheduler/telemetry_intake.h"
#include "straggler/detector.h"
#include "straggler/predictor.h"

namespace pacer {

// Runs the straggler detector and the workers' iteration-time predictors (STRAGGLERS.md section
// 1) over the job's reports: at every iteration boundary it flags the nodes that became
// stragglers and clears those that recovered, in the log and the metrics log.
class StragglerWatch : public TelemetryObserver {
 public:
  StragglerWatch(const Node& node, MetricsLog& metrics);

  void OnIteration(int index, int rank, const IterationReport& report) override;
  void OnServerReport(int index, int rank, const ServerReport& report) override;
  void OnBoundary(int64_t iteration) override;
  // A lost worker is judged no more, nor the fastest: its flags clear at the next boundary.
  void OnExclusion(int index) override;

  // The workers flagged at the last boundary as one of `kinds`, by index (read from another
  // observer's OnBoundary, which the intake runs after this one's).
  std::set<int> FlaggedWorkers(std::initializer_list<straggler::Detection::Kind> kinds) const;

 private:
  void Decide(int64_t iteration, const straggler::Detection& d, const char* action);

  const Node& node_;
  MetricsLog& metrics_;
  // No lock of its own: the intake hands it one report at a time.
  straggler::Detector detector_;
  std::map<int, std::unique_ptr<straggler::Predictor>> predictors_;  // by worker index
  std::map<int, int> server_reports_;                                // per server: reports seen
  std::set<std::pair<int, straggler::Detection::Kind>> flagged_;     // (index, kind)
};

}  // namespace pacer
