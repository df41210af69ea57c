#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ps/transport/transport.h"

namespace pacer {

// Ranks as threads of one process, so a test can run a whole job (scheduler, servers, workers) in
// one binary. Messages go through the same encode, copy and validate steps as on a wire.
class LocalTransport : public Transport {
 public:
  // The shared medium of one in-process job of `size` ranks.
  class Fabric {
   public:
    explicit Fabric(int size);
    int size() const { return static_cast<int>(inboxes_.size()); }

   private:
    friend class LocalTransport;
    struct Envelope {
      std::vector<uint8_t> header;
      Buffer payload;
    };
    struct Inbox {
      std::mutex mu;
      std::condition_variable ready;
      std::deque<Envelope> queue;
      bool closed = false;
    };
    std::vector<std::unique_ptr<Inbox>> inboxes_;
    std::mutex barrier_mu_;
    std::condition_variable barrier_cv_;
    int barrier_waiting_ = 0;
    int64_t barrier_generation_ = 0;
  };

  LocalTransport(std::shared_ptr<Fabric> fabric, int rank);
  ~LocalTransport() override;

  std::string name() const override { return "local"; }
  int rank() const override { return rank_; }
  int size() const override { return fabric_->size(); }
  void Start(ReceiveHandler handler, PayloadPlacer placer) override;
  void SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                 SendCallback on_sent) override;
  void Stop() override;

 private:
  void DeliveryLoop();
  void Close();

  std::shared_ptr<Fabric> fabric_;
  int rank_;
  ReceiveHandler handler_;
  std::thread delivery_thread_;
};

}  // namespace pacer
