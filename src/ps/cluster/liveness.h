#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ps/cluster/roles.h"
#include "ps/messages/message.h"

namespace pacer {

// Knows, on the scheduler, that every rank is alive, and on every other rank, that the scheduler
// is: each rank sends the scheduler a heartbeat a few times per timeout, and the scheduler sends
// each rank one. A rank not heard from for the whole timeout (frozen, dead, cut off) is lost;
// Liveness then describes it (role, index, rank, host, when it was last heard from) to `on_lost`.
// Heartbeats travel on their own thread, so a rank busy computing or waiting still sends them.
class Liveness {
 public:
  using Sender = std::function<void(int dst, const Message& msg)>;
  using LossHandler = std::function<void(int rank, const std::string& description)>;

  // `hosts` by rank; `send` must not throw.
  Liveness(const Roles& roles, int rank, std::vector<std::string> hosts,
           std::chrono::milliseconds timeout, Sender send, LossHandler on_lost);
  ~Liveness();
  Liveness(const Liveness&) = delete;
  Liveness& operator=(const Liveness&) = delete;

  // Starts sending heartbeats and watching for silence.
  void Start();
  // Stops both (the job's last barrier passed: ranks may now leave at their own pace).
  void Stop();
  // A heartbeat came from `msg`'s sender.
  void Heard(const Message& msg);
  // Stops watching `rank` (it was lost, and the job goes on without it).
  void Forget(int rank);

  // The heartbeat's period: a tenth of the timeout, at most half a second.
  std::chrono::milliseconds period() const { return period_; }

 private:
  using Clock = std::chrono::steady_clock;
  void Run();
  void SendHeartbeats();
  void CheckSilence();
  std::string Describe(int rank, Clock::duration silent) const;

  const Roles roles_;
  const int rank_;
  const std::vector<std::string> hosts_;
  const std::chrono::milliseconds timeout_;
  const std::chrono::milliseconds period_;
  const Sender send_;
  const LossHandler on_lost_;
  const Clock::time_point start_ = Clock::now();
  // By rank, since the start: when it was last heard from; watched_ says whose silence counts.
  std::vector<std::atomic<int64_t>> last_heard_ns_;
  std::vector<std::atomic<bool>> watched_;
  Clock::duration last_check_{};  // the liveness thread's

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace pacer
