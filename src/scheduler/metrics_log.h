#pragma once

#include <atomic>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>

#include "pacer/config.h"
#include "pacer/migration_control.h"
#include "ps/messages/telemetry.h"
#include "scheduler/telemetry_intake.h"
#include "straggler/detector.h"
#include "straggler/sas_policy.h"
#include "straggler/sms_policy.h"
#include "straggler/stret_policy.h"
#include "straggler/sync_chooser.h"

namespace pacer {

// The scheduler's metrics log (--metrics): JSON lines, one per worker iteration, one per server
// report, one per decision (a node flagged or cleared, a range moved, a SAS plan). Field names are
// stable: tools and checks read them. Without a path it writes nothing. Thread-safe.
class MetricsLog : public TelemetryObserver {
 public:
  // Throws Error naming the path when the file cannot be opened.
  explicit MetricsLog(const std::string& path);

  bool enabled() const { return enabled_; }

  // The job's first line: its size, synchronization rule and injected faults (--inject, as given),
  // so a reader knows which nodes were slowed on purpose.
  void Job(const Config& config, int workers, int servers);

  // A line per report.
  void OnIteration(int index, int rank, const IterationReport& r) override;
  void OnServerReport(int index, int rank, const ServerReport& r) override;
  // The detector flagged (`action` "flag") or cleared a node: `rank` and its role `index`.
  void Detection(int64_t iteration, double t_s, int rank, const straggler::Detection& d,
                 const char* action);
  // A SAS plan: its moves, the slowest server's time over the ideal now and once they are done.
  void Plan(int64_t iteration, double t_s, const straggler::SasDecision& decision);
  // A range moved, ordered by `policy` at `iteration`.
  void Migration(const char* policy, int64_t iteration, double t_s,
                 const MigrationControl::Move& move);
  // A STRET decision about worker `rank` (its partner's rank, or -1): `action` "order" when
  // ordered, "done" with what a probe measured, "failed" with why not.
  void Stret(int64_t iteration, double t_s, int rank, int partner_rank,
             const straggler::StretDecision& d, const char* action, const std::string& detail);
  // An SMS batch order for worker `rank`, decided at `iteration`: `action` "order" when the
  // worker took it, "failed" with why not in `detail`.
  void Sms(int64_t iteration, double t_s, int rank, const straggler::SmsShrink& s,
           const char* action, const std::string& detail);
  // STRN's decision at `iteration` (--sync=auto), after `why` ("profile" or "regime"): `action`
  // "switch" from mode `from` to the chooser's pick, "keep" `from`, or "failed" (`detail` says
  // why), with the gradient noise scale (null if infinite) and the chooser's table.
  void Sync(int64_t iteration, double t_s, const char* why, const char* action,
            const std::string& from, const straggler::SyncChoice& choice, double noise_scale,
            const std::string& detail);
  // The job went on without worker `index` (rank `rank`), lost as `why` says, at the latest clock
  // a worker reported.
  void Exclusion(double t_s, int rank, int index, const std::string& why);

 private:
  void Write(const std::string& line, bool flush);

  bool enabled_ = false;  // set once, at construction
  std::atomic<int64_t> latest_clock_{0};
  std::mutex mu_;
  std::ofstream out_;
};

}  // namespace pacer
