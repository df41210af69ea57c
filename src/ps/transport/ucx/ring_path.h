#pragma once

#include <vector>

#include "ps/transport/ucx/payload_path.h"
#include "ps/transport/ucx/shared_memory_routes.h"

namespace pacer {

// A large payload to a rank on this host that mapped this rank's SharedMemoryRing: the payload
// is copied into a record of the ring (or, where it lies in memory the ring lent out, left where
// it is) and the message carries only its location. The reader hands the record out as a Buffer
// whose release marks it free. One small message replaces a rendezvous's request, ready, copy and
// done. A payload the ring cannot take (too large, no room) is left to the next path.
class RingPath : public PayloadPath {
 public:
  RingPath(PathServices& services, SharedMemoryRoutes& routes)
      : PayloadPath(services), routes_(routes) {}

  const char* name() const override { return "ring"; }
  std::vector<unsigned> message_ids() const override;
  bool Take(OutgoingSend& send) override;
  ucs_status_t Receive(unsigned id, const void* header, size_t header_length, void* data,
                       size_t length, const ucp_am_recv_param_t* param) override;

 private:
  SharedMemoryRoutes& routes_;
};

}  // namespace pacer
