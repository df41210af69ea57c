#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace pacer {

// A transport's progress thread, and the end that every transport with one shares: its sends
// complete (or the wait for them times out, logged), every rank gets that far, and only then does
// the thread stop, so that a peer still fetching data from this rank, or sending to it, is served
// to the end.
class ProgressThread {
 public:
  ~ProgressThread();

  // Runs `loop` on a thread of its own; it should return soon after stopping() turns true.
  void Start(std::function<void()> loop);
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }
  bool running() const { return thread_.joinable(); }

  // The orderly end. `drain` waits up to the given time for this rank's sends and says whether they
  // completed; `meet` waits for every rank; `wake` rouses the thread where it blocks.
  void Stop(int rank, double timeout_s, const std::function<bool(std::chrono::milliseconds)>& drain,
            const std::function<void()>& meet, const std::function<void()>& wake);
  // Stops the thread at once (a transport that goes without the orderly end).
  void Halt(const std::function<void()>& wake);

 private:
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace pacer
