#include "ps/transport/ucx/rendezvous_path.h"

#include <glog/logging.h>

#include <cstring>
#include <memory>

#include "ps/transport/ucx/active_message_ids.h"

namespace pacer {

struct RendezvousPath::Receipt {
  DecodedHeader header;
  void* descriptor;
  size_t length;
  Buffer payload;
  RendezvousPath* path;
};

std::vector<unsigned> RendezvousPath::message_ids() const { return {kRendezvousMessageId}; }

bool RendezvousPath::Take(OutgoingSend& send) {
  send.message_id = kRendezvousMessageId;
  if (send.fragments.size() > 1) {
    uint8_t* out = nullptr;
    Buffer joined = services_.pool().Allocate(static_cast<size_t>(send.bytes), &out);
    for (const Buffer& f : send.fragments) {
      if (f.size() > 0) std::memcpy(out, f.data(), f.size());
      out += f.size();
    }
    send.fragments = {joined};
  }
  return true;
}

void RendezvousPath::Post(OutgoingSend& send) {
  services_.PostWhole(send, kRendezvousMessageId, UCP_AM_SEND_FLAG_RNDV);
}

ucs_status_t RendezvousPath::Receive(unsigned id, const void* header, size_t header_length,
                                     void* data, size_t length, const ucp_am_recv_param_t* param) {
  return Accept(header, header_length, data, length, param);
}

ucs_status_t RendezvousPath::Accept(const void* header, size_t header_length, void* data,
                                    size_t length, const ucp_am_recv_param_t* param) {
  DecodedHeader decoded;
  if (!services_.DecodeHeaderOrLog(header, header_length, &decoded)) return UCS_OK;
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) return Fetch(std::move(decoded), data, length);
  services_.DeliverCopy(std::move(decoded), data, length);
  return UCS_OK;
}

ucs_status_t RendezvousPath::Fetch(DecodedHeader&& header, void* descriptor, size_t length) {
  if (length != header.payload_bytes()) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected a message from rank "
               << header.meta.sender() << ": payload of " << length << " bytes, header declares "
               << header.payload_bytes();
    return UCS_OK;
  }
  to_start_.push_back(new Receipt{std::move(header), descriptor, length, Buffer(), this});
  return UCS_INPROGRESS;
}

bool RendezvousPath::RunDeferred() {
  if (to_start_.empty() && fetched_.empty()) return false;
  std::vector<Receipt*> to_start;
  std::vector<std::pair<Receipt*, ucs_status_t>> fetched;
  to_start.swap(to_start_);
  fetched.swap(fetched_);
  for (Receipt* receipt : to_start) Start(receipt);
  for (auto& [receipt, status] : fetched) Finish(receipt, status);
  return true;
}

void RendezvousPath::Start(Receipt* receipt) {
  uint8_t* out = nullptr;
  receipt->payload = services_.Destination(receipt->header, receipt->length, &out);
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.cb.recv_am = &RendezvousPath::OnFetched;
  param.user_data = receipt;
  param.datatype = ucp_dt_make_contig(1);
  ucs_status_ptr_t request =
      ucp_am_recv_data_nbx(services_.worker(), receipt->descriptor, out, receipt->length, &param);
  if (request == nullptr) {
    Finish(receipt, UCS_OK);
  } else if (UCS_PTR_IS_ERR(request)) {
    Finish(receipt, UCS_PTR_STATUS(request));
  }
}

void RendezvousPath::OnFetched(void* request, ucs_status_t status, size_t length, void* user_data) {
  auto* receipt = static_cast<Receipt*>(user_data);
  ucp_request_free(request);
  receipt->path->fetched_.emplace_back(receipt, status);
}

void RendezvousPath::Finish(Receipt* receipt, ucs_status_t status) {
  std::unique_ptr<Receipt> owned(receipt);
  if (status != UCS_OK) {
    LOG(ERROR) << "rank " << services_.rank() << ": rendezvous receive from rank "
               << receipt->header.meta.sender() << " failed: " << ucs_status_string(status);
    return;
  }
  Message msg;
  if (services_.DecodeOrLog(std::move(receipt->header), receipt->payload, &msg)) {
    services_.Deliver(std::move(msg));
  }
}

}  // namespace pacer
