#pragma once

#include <utility>
#include <vector>

#include "ps/transport/ucx/payload_path.h"

namespace pacer {

// A large payload by UCX's own rendezvous: the message announces it, the receiver fetches it
// (ucp_am_recv_data_nbx) straight into where it should land (a pull's destination) or a pooled
// buffer, and the sender's memory is read or written in place. A payload of several fragments is
// first joined into one buffer: UCX 1.13 has no zero-copy rendezvous for iov data and would pack
// it into many small fragments, which costs more than one copy. The last path for large payloads:
// it takes every one the others leave.
class RendezvousPath : public PayloadPath {
 public:
  explicit RendezvousPath(PathServices& services) : PayloadPath(services) {}

  const char* name() const override { return "rendezvous"; }
  std::vector<unsigned> message_ids() const override;
  bool Take(OutgoingSend& send) override;
  void Post(OutgoingSend& send) override;
  ucs_status_t Receive(unsigned id, const void* header, size_t header_length, void* data,
                       size_t length, const ucp_am_recv_param_t* param) override;
  // On the driver, after UCX's callbacks: starts the fetches they announced and hands over those
  // that finished; returns whether there were any.
  bool RunDeferred();

  // From a callback: a plain active message of this path or the eager one, its payload handed
  // over as data or, where UCX chose its rendezvous, fetched once the callback returned. Returns
  // what the callback returns.
  ucs_status_t Accept(const void* header, size_t header_length, void* data, size_t length,
                      const ucp_am_recv_param_t* param);

 private:
  struct Receipt;
  static void OnFetched(void* request, ucs_status_t status, size_t length, void* user_data);
  ucs_status_t Fetch(DecodedHeader&& header, void* descriptor, size_t length);
  void Start(Receipt* receipt);
  void Finish(Receipt* receipt, ucs_status_t status);

  std::vector<Receipt*> to_start_;
  std::vector<std::pair<Receipt*, ucs_status_t>> fetched_;
};

}  // namespace pacer
