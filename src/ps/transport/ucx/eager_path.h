#pragma once

#include <vector>

#include "ps/transport/ucx/payload_path.h"
#include "ps/transport/ucx/rendezvous_path.h"

namespace pacer {

// A payload below the rendezvous threshold, as it lies (contiguous, or an iov: no gathering copy),
// as the data of one active message. The receiver copies it out of UCX's buffer; UCX itself may
// still choose its rendezvous for one of these, which `rendezvous` then fetches.
class EagerPath : public PayloadPath {
 public:
  EagerPath(PathServices& services, RendezvousPath& rendezvous)
      : PayloadPath(services), rendezvous_(rendezvous) {}

  const char* name() const override { return "eager"; }
  std::vector<unsigned> message_ids() const override;
  bool Take(OutgoingSend& send) override;
  ucs_status_t Receive(unsigned id, const void* header, size_t header_length, void* data,
                       size_t length, const ucp_am_recv_param_t* param) override;

 private:
  RendezvousPath& rendezvous_;
};

}  // namespace pacer
