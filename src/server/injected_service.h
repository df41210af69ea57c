#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>

namespace pacer {

class Node;

// The CPU time of the calling thread: a busy host's preemption does not inflate it. Servers
// measure service in it where ranks share cores or faults are emulated (RequestShards).
double ThreadCpuSeconds();

// --inject's server effects on one server's request handling (STRAGGLERS.md section 9):
// - rate=RATE: an emulated capacity, shared by the server's shards like a link without burst. A
//   request of B bytes of work occupies the server for B / RATE seconds, after the one before it,
//   and its shard sleeps until then: the host's CPUs stay free for the other nodes of a job that
//   shares them, and the server's speed no longer depends on theirs. service=Mx divides RATE by M.
// - service=Mx without a rate: a request first spins for (M-1) times its expected CPU time, so it
//   costs CPU time as a slow CPU would.
class InjectedService {
 public:
  explicit InjectedService(Node& node);

  // Whether a rate spec names this server at any time: its requests may then sleep, so none may
  // run on the receiving thread.
  bool emulates_rate() const { return emulates_rate_; }
  // Whether any fault is injected into this job (requests may then be delayed).
  bool any_fault() const { return any_fault_; }

  struct Delay {
    bool spun = false;      // service=Mx spun
    double emulated_s = 0;  // the request's occupancy of the emulated server: its service time
  };
  // Before handling a request of `bytes` of work: spins, or sleeps until the emulated server is
  // done with the request (so its response leaves no earlier). `cpu_seconds_per_byte`: the
  // shard's measured cost, which service=Mx multiplies when no rate applies.
  Delay Apply(size_t bytes, double cpu_seconds_per_byte);

 private:
  Node& node_;
  const int index_;  // this server's
  const bool any_fault_;
  bool emulates_rate_ = false;
  std::mutex mu_;
  std::chrono::steady_clock::time_point free_at_{};
};

}  // namespace pacer
