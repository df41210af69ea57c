#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ps/session_core.h"
#include "scheduler/range_mover.h"
#include "scheduler/sas_balancer.h"
#include "straggler/detector.h"
#include "straggler/predictor.h"

namespace pacer {

// The scheduler's view of the job: it takes the workers' iteration reports, runs the straggler
// detector and predictors at every iteration boundary (once every worker has reported the
// iteration), and writes the metrics log (--metrics): one JSON line per worker iteration, one per
// server report (every --server_report_ms) and one per detection, when a node is flagged and when
// it is cleared, one per range moved and one per SAS plan (--balance=sas). Field names are stable:
// tools and checks read them.
class Monitor {
 public:
  explicit Monitor(SessionCore& session);  // on the scheduler
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // Orders no more moves and abandons the one in flight (after the job's last barrier its
  // acknowledgement may never come). The session calls it when it finalizes.
  void Stop();

 private:
  void OnReport(int rank, const IterationReport& report);
  void OnServerReport(int rank, const ServerReport& report);
  void Detect(int64_t iteration);
  void Decide(int64_t iteration, const straggler::Detection& d, const char* action);
  // --migrate_every: orders a move of a random GradientSync key's range at this boundary.
  void MoveRandomRange(int64_t iteration);
  // --balance=sas: orders SasPolicy's moves at this boundary, unless moves are under way.
  void Balance(int64_t iteration);
  void Moved(const RangeMover::Order& order, const MigrationControl::Move& move);
  int WorkerRank(int index) const { return 1 + session_.num_servers() + index; }

  SessionCore& session_;
  std::mutex mu_;
  std::ofstream metrics_;
  straggler::Detector detector_;
  std::map<int, std::unique_ptr<straggler::Predictor>> predictors_;  // by worker index
  std::vector<int64_t> reported_;      // per worker: iterations reported
  std::map<int, int> server_reports_;  // per server: reports seen
  int64_t boundary_ = 0;               // every worker has reported the iterations before it
  std::set<std::pair<int, straggler::Detection::Kind>> flagged_;  // (worker index, kind)
  std::map<int, int64_t> server_keys_;  // per server: keys held, as last reported
  std::mt19937_64 rng_;
  std::unique_ptr<SasBalancer> balancer_;
  std::unique_ptr<RangeMover> mover_;  // last: its thread stops first
};

}  // namespace pacer
