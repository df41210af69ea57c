#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "common/spin_policy.h"

namespace pacer {

class Transport;

// Timestamps of a KVWorker's requests and the parts each still waits for (sends to complete,
// responses to arrive). When the last part is in, the owner finishes the request (assembles pulled
// values, runs the callback) and calls Finish; Wait returns after that. Thread-safe.
class RequestTracker {
 public:
  explicit RequestTracker(int rank) : rank_(rank) {}

  // A new request waiting for `parts` parts; returns its timestamp. Throws LostRankError once the
  // job failed.
  int Start(int parts);
  // Records one part; a non-empty error fails the request (the first error is kept). Returns true
  // when this was the last part: the caller must then call Finish. Unknown timestamps (requests
  // abandoned after a timeout) return false.
  bool PartDone(int timestamp, const std::string& error);
  // The request now waits for `parts` more parts (a redirected part resent to new owners). Call
  // before recording the part that caused them.
  void AddParts(int timestamp, int parts);
  // The first error recorded for the request, or empty.
  std::string ErrorOf(int timestamp);
  void Finish(int timestamp, const std::string& error);
  // The job failed (it lost a rank): every request finishes now, its Wait throwing LostRankError
  // with `why`, and so does every later Start.
  void FailAll(const std::string& why);

  // Waits until finished, forgets the request, and throws Error if it failed. With
  // `throw_on_timeout`, a timeout throws TimeoutError and abandons the request (late parts are
  // dropped); otherwise a timeout returns false and the request stays. With a spin policy, polls
  // for its budget before blocking (waking a blocked thread costs more than a short poll), and
  // records how long the wait took; with a `transport` that can, it polls and blocks in the
  // transport, receiving the reply on this thread (Transport::PollUntil). One waiter per request.
  bool Wait(int timestamp, std::chrono::milliseconds timeout, bool throw_on_timeout,
            SpinPolicy* spin = nullptr, Transport* transport = nullptr);

 private:
  struct Entry {
    int remaining = 0;
    std::atomic<bool> finished{false};
    std::string error;
  };
  const int rank_;
  std::mutex mu_;
  std::condition_variable finished_;
  std::map<int, Entry> entries_;
  int next_timestamp_ = 0;
  std::string failure_;  // FailAll's reason
};

}  // namespace pacer
