#pragma once

#include <string>

namespace pacer {

// How servers turn the workers' gradients into updates (../docs: STRAGGLERS.md section 2). Spelled
// as --sync takes it: "bsp", "asp", "ssp:S", "backup:B", "dynsgd", "consgd" or "consgd:C".
struct SyncMode {
  enum class Kind {
    kBsp,     // one update per iteration, from every worker's gradient
    kAsp,     // each gradient applied on arrival
    kSsp,     // on arrival, but a worker may run at most `staleness` clocks ahead of the slowest
    kBackup,  // one update per iteration, from the first num_workers - backups gradients
    kDynSgd,  // on arrival, scaled by 1 / (staleness + 1)
    kConSgd,  // on arrival, scaled by a constant
  };
  Kind kind = Kind::kBsp;
  int staleness = 0;  // kSsp
  int backups = 0;    // kBackup
  double scale = 0;   // kConSgd; 0 means 1 / num_workers

  // Throws pacer::Error naming the part of `text` that is wrong.
  static SyncMode Parse(const std::string& text);
  std::string ToString() const;
  // Whether each gradient is applied on its own as it arrives (else once per iteration).
  bool on_arrival() const { return kind != Kind::kBsp && kind != Kind::kBackup; }

  bool operator==(const SyncMode& o) const {
    return kind == o.kind && staleness == o.staleness && backups == o.backups && scale == o.scale;
  }
  bool operator!=(const SyncMode& o) const { return !(*this == o); }
};

}  // namespace pacer
