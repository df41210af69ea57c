#pragma once

#include <string>
#include <vector>

namespace pacer {

/// How servers turn the workers' gradients into updates (../docs: STRAGGLERS.md section 2).
/// Spelled as `--sync` takes it: "bsp", "asp", "ssp:S", "backup:B", "dynsgd", "consgd", "consgd:C",
/// "epsp:S" or "groups:S:G" (G: each group's workers joined by '+', groups by '/', as in
/// "groups:2:0+1+2/3"). A job's `--sync` may also be "auto" (see Starting).
struct SyncMode {
  /// The rule; staleness, backups and scale are its parameters.
  enum class Kind {
    kBsp,     ///< one update per iteration, from every worker's gradient
    kAsp,     ///< each gradient applied on arrival
    kSsp,     ///< on arrival, but a worker may run at most `staleness` clocks ahead of the slowest
    kBackup,  ///< one update per iteration, from the first num_workers - backups gradients
    kDynSgd,  ///< on arrival, scaled by 1 / (staleness + 1)
    kConSgd,  ///< on arrival, scaled by a constant
    /// Falcon's EPSP: the rule of bsp (staleness 0, enforced synchronization) or of ssp:S (slack
    /// synchronization; each push applied on arrival, scaled by 1 / num_workers so a clock's
    /// pushes add up to BSP's update, exactly so under plain SGD), with workers' tasks granted by
    /// the scheduler, so pioneers take stragglers' tasks (GradientSync::NextTask).
    kEpsp,
    /// STRN's groups: synchronous within each group of workers (one update per group and clock:
    /// its members' weighted gradients summed over the job's live workers, its part of BSP's
    /// update, so one clock of every group moves the parameters as far as BSP's one update),
    /// asynchronous across groups (each group's update applied as it resolves), a group at most
    /// `staleness` clocks ahead of the slowest group.
    kGroups,
  };
  Kind kind = Kind::kBsp;  ///< the rule
  int staleness = 0;       ///< kSsp, kEpsp: clocks a worker may run ahead of the slowest
  int backups = 0;         ///< kBackup: gradients an iteration's update does without
  double scale = 0;        ///< kConSgd; 0 means 1 / num_workers
  std::vector<std::vector<int>> groups;  ///< kGroups: each group's workers, by role index

  /// Throws pacer::Error naming the part of `text` that is wrong.
  static SyncMode Parse(const std::string& text);
  /// The mode a job of `--sync=sync` starts in: bsp for "auto" (STRN's chooser switches from it
  /// once it has profiled the job), else Parse(sync).
  static SyncMode Starting(const std::string& sync);
  /// The mode as `--sync` spells it; Parse reads it back.
  std::string ToString() const;
  /// Throws pacer::Error unless the mode fits a job of `num_workers`: backups leave a worker to
  /// wait for, and groups hold each worker exactly once.
  void CheckFits(int num_workers) const;
  /// kGroups: the index of the group that holds `worker`, or -1.
  int GroupOf(int worker) const;
  /// Whether each gradient is applied on its own as it arrives (else once per iteration).
  bool on_arrival() const {
    return kind != Kind::kBsp && kind != Kind::kBackup && !(kind == Kind::kEpsp && staleness == 0);
  }
  /// Whether a worker may start clock c before clock c - staleness - 1 is complete (else only
  /// once clock c - 1 is).
  bool bounded_staleness() const {
    return kind == Kind::kSsp || (kind == Kind::kEpsp && staleness > 0);
  }

  /// The same rule with the same parameters.
  bool operator==(const SyncMode& o) const {
    return kind == o.kind && staleness == o.staleness && backups == o.backups && scale == o.scale &&
           groups == o.groups;
  }
  /// Not the same rule or not the same parameters.
  bool operator!=(const SyncMode& o) const { return !(*this == o); }
};

}  // namespace pacer
