#pragma once

#include <atomic>

namespace pacer {

// Which policy may order the workers' batch sizes, where several would (--policy=auto composes
// them). Orders that interleave undo each other: STRN's profile measures the noise scale at the
// sizes it ordered, and a size STRET or SMS ordered meanwhile would spoil it; STRET's tuning sets
// every worker's size from the workers' profiles, which a shrink on top would undo. So STRN's
// profile holds the sizes from the job's start until its first decision, STRET tunes only once
// they are free, and SMS shrinks only while neither holds them. Read and set from the policies'
// threads.
class BatchOwner {
 public:
  explicit BatchOwner(bool profile_first) : profiling_(profile_first) {}

  // STRN's profile is over (its batch orders have been carried out).
  void EndProfile() { profiling_ = false; }
  // STRET tuned the sizes: they stay as tuned.
  void MarkTuned() { tuned_ = true; }

  // Whether STRET may tune now.
  bool MayTune() const { return !profiling_; }
  // Whether SMS may shrink now.
  bool MayShrink() const { return !profiling_ && !tuned_; }

 private:
  std::atomic<bool> profiling_;
  std::atomic<bool> tuned_{false};
};

}  // namespace pacer
