#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ps/bootstrap/bootstrap.h"
#include "ps/transport/transport.h"

namespace pacer {

// Ranks as threads of one process, so a test can run a whole job (scheduler, servers, workers) in
// one binary. Messages go through the same encode, copy and validate steps as on a wire: each is
// copied into the receiver's inbox, which a thread of the receiver's delivers from.
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
  };

  // The rank `bootstrap` names, of a job of the fabric's size; the bootstrap must outlive it.
  LocalTransport(std::shared_ptr<Fabric> fabric, Bootstrap& bootstrap);
  ~LocalTransport() override;

  std::string name() const override { return "local"; }
  int rank() const override { return rank_; }
  int size() const override { return fabric_->size(); }
  void Start(ReceiveHandler handler, PayloadPlacer placer) override;
  void SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                 SendCallback on_sent) override;
  void Stop() override;
  void Abandon() override;

 private:
  void DeliveryLoop();
  void Close();

  std::shared_ptr<Fabric> fabric_;
  Bootstrap& bootstrap_;
  int rank_;
  ReceiveHandler handler_;
  std::thread delivery_thread_;
};

}  // namespace pacer
