#pragma once

#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ps/transport/ucx/payload_path.h"
#include "ps/transport/ucx/shared_memory_routes.h"

namespace pacer {

// A large payload to a rank on this host that proved it can read this process's memory: the
// message carries only a description of where the payload lies, the receiver copies it out with
// several threads (CrossMemoryReader) and hands it back with a small release, on which the send
// completes. UCX's rendezvous by cross-memory copy, less one round trip and with the copy split
// over threads. Taken by ranks whose receivers read (servers: their stored values lie on huge
// pages, which the reader then pins instead of the sender).
class DescribedPath : public PayloadPath {
 public:
  DescribedPath(PathServices& services, SharedMemoryRoutes& routes)
      : PayloadPath(services), routes_(routes) {}

  const char* name() const override { return "described"; }
  std::vector<unsigned> message_ids() const override;
  bool Take(OutgoingSend& send) override;
  void Post(OutgoingSend& send) override;
  ucs_status_t Receive(unsigned id, const void* header, size_t header_length, void* data,
                       size_t length, const ucp_am_recv_param_t* param) override;
  void Failed(OutgoingSend& send) override;

 private:
  ucs_status_t ReceiveDescription(const void* header, size_t header_length, void* data,
                                  size_t length, const ucp_am_recv_param_t* param);
  ucs_status_t ReceiveRelease(const void* header, size_t header_length, size_t length);
  // Queues the message that hands a described payload back to `sender`.
  void QueueRelease(int sender, uint64_t token);

  SharedMemoryRoutes& routes_;
  std::atomic<uint64_t> next_token_{1};
  std::unordered_map<uint64_t, OutgoingSend*> awaiting_release_;  // by token; driver only
};

}  // namespace pacer
