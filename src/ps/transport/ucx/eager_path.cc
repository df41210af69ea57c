#include "ps/transport/ucx/eager_path.h"

#include "ps/transport/ucx/active_message_ids.h"

namespace pacer {

std::vector<unsigned> EagerPath::message_ids() const { return {kEagerMessageId}; }

bool EagerPath::Take(OutgoingSend& send) {
  send.message_id = kEagerMessageId;
  return true;
}

ucs_status_t EagerPath::Receive(unsigned id, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param) {
  return rendezvous_.Accept(header, header_length, data, length, param);
}

}  // namespace pacer
