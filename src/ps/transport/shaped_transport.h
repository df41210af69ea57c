#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "common/fault_spec.h"
#include "ps/transport/transport.h"

namespace pacer {

// Fault injection on links (--inject=link:FROM->TO:bw=RATE or :delay=TIME): a decorator that
// holds each outgoing message until its link allows it. A capped link is a token bucket without
// burst (a message occupies the link for bytes / rate, after the one before it); a delay is added
// to every message. Messages to one destination keep their order. Receiving is not shaped: the
// sender's side models the link.
class ShapedTransport : public Transport {
 public:
  // `faults`: the job's link specs; `server_ranks` and `worker_ranks`, by index: to resolve sN
  // and wN link ends to ranks.
  ShapedTransport(std::unique_ptr<Transport> inner, std::vector<FaultSpec> faults,
                  std::vector<int> server_ranks, std::vector<int> worker_ranks, uint64_t seed);
  ~ShapedTransport() override;

  std::string name() const override { return inner_->name(); }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  void Start(ReceiveHandler handler, PayloadPlacer placer) override {
    inner_->Start(std::move(handler), std::move(placer));
  }
  void SetPayloadConsumers(PayloadConsumerFactory factory) override {
    inner_->SetPayloadConsumers(std::move(factory));
  }
  void SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                 SendCallback on_sent) override;
  void Stop() override;
  void Abandon() override;
  std::shared_ptr<void> LendSharedMemory(size_t bytes) override {
    return inner_->LendSharedMemory(bytes);
  }

 private:
  // Ends the releaser thread, sending what it holds first.
  void StopReleaser();
  using Clock = std::chrono::steady_clock;
  struct Held {
    Clock::time_point release;
    uint64_t sequence;
    int dst;
    std::vector<uint8_t> header;
    std::vector<Buffer> payload;
    SendCallback on_sent;
    bool operator>(const Held& o) const {
      return release != o.release ? release > o.release : sequence > o.sequence;
    }
  };

  bool Matches(const FaultSpec::Node& end, int rank) const;
  void ReleaseLoop();

  std::unique_ptr<Transport> inner_;
  std::vector<FaultSpec> faults_;
  const std::vector<int> server_ranks_;
  const std::vector<int> worker_ranks_;
  const uint64_t seed_;
  const Clock::time_point start_ = Clock::now();
  std::mutex mu_;
  std::condition_variable changed_;
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> held_;
  std::vector<Clock::time_point> link_free_;     // per destination: when a capped link is free
  std::vector<Clock::time_point> last_release_;  // per destination: keeps messages in order
  uint64_t sequence_ = 0;
  bool stopping_ = false;
  std::thread releaser_;
};

}  // namespace pacer
