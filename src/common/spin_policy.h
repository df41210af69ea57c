#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace pacer {

// How long a thread that ran out of work should poll before it blocks. Polling pays when the next
// event comes sooner than a wake-up would take (tens of microseconds on a VM); when events are
// further apart, polling only takes a core from the threads that produce them (on a 2-core host,
// the very threads being waited for). So: poll up to `max_spin`, but only while the recent idle
// gaps (an exponentially weighted mean) stay within it.
class SpinPolicy {
 public:
  using Micros = std::chrono::duration<double, std::micro>;

  explicit SpinPolicy(std::chrono::microseconds max_spin) : max_spin_(max_spin) {}

  // The polling budget for the idle period starting now.
  std::chrono::microseconds Budget() const {
    return mean_gap_us_.load(std::memory_order_relaxed) <= max_spin_.count()
               ? max_spin_
               : std::chrono::microseconds(0);
  }
  // Records how long the last idle period lasted, polled or blocked. Several threads may record;
  // a lost update only delays the estimate.
  void RecordGap(Micros gap) {
    double mean = mean_gap_us_.load(std::memory_order_relaxed);
    mean_gap_us_.store(mean * 0.75 + gap.count() * 0.25, std::memory_order_relaxed);
  }

 private:
  const std::chrono::microseconds max_spin_;
  std::atomic<double> mean_gap_us_{0};
};

// One polling thread's alternation of work and idleness: call PollAgain once per pass.
class IdlePoller {
 public:
  explicit IdlePoller(std::chrono::microseconds max_spin) : spin_(max_spin) {}

  // `active`: the pass found work. Returns true while the thread should poll again (after a
  // yield when idle), false once it has polled its budget and should block.
  bool PollAgain(bool active) {
    const auto now = std::chrono::steady_clock::now();
    if (active) {
      if (idle_) spin_.RecordGap(now - idle_since_);
      idle_ = false;
      return true;
    }
    if (!idle_) {
      idle_ = true;
      idle_since_ = now;
      budget_ = spin_.Budget();
    }
    if (now - idle_since_ >= budget_) return false;
    // Poll politely, now and then: a thread we wait for may need this core. A yield is a system
    // call, which a round trip would pay on every pass, so most passes only pause the CPU.
    if (now - last_yield_ >= kYieldEvery) {
      std::this_thread::yield();
      last_yield_ = now;
    } else {
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();
#endif
    }
    return true;
  }

 private:
  static constexpr std::chrono::microseconds kYieldEvery{20};

  SpinPolicy spin_;
  bool idle_ = false;
  std::chrono::steady_clock::time_point idle_since_;
  std::chrono::steady_clock::time_point last_yield_;
  std::chrono::microseconds budget_{0};
};

}  // namespace pacer
