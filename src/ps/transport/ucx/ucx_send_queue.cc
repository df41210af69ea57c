// UcxTransport's send side (ucx_transport.h): posting a send's active message, the queue of sends
// past the in-flight cap, and their completion.
#include <glog/logging.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/str_cat.h"
#include "ps/transport/ucx/ucx_transport.h"

namespace pacer {

void UcxTransport::QueueUncapped(OutgoingSend* send) {
  send->transport = this;
  std::lock_guard<std::mutex> lock(queue_mu_);
  queued_sends_.push_back(send);
}

bool UcxTransport::PostQueuedSends() {
  bool posted = false;
  for (;;) {  // completions may queue more sends
    std::vector<OutgoingSend*> to_post;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      to_post.swap(queued_sends_);
    }
    if (to_post.empty()) return posted;
    for (OutgoingSend* send : to_post) Post(send);
    posted = true;
  }
}

bool UcxTransport::HasQueuedSends() {
  std::lock_guard<std::mutex> lock(queue_mu_);
  return !queued_sends_.empty();
}

void UcxTransport::Post(OutgoingSend* send) {
  if (send->capped) send->path->CountPosted();
  send->path->Post(*send);
}

void UcxTransport::PostActiveMessage(OutgoingSend& send, unsigned id, const void* header,
                                     size_t header_length, const void* buffer, size_t count,
                                     ucp_datatype_t datatype, uint32_t flags) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                       UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &UcxTransport::OnSendDone;
  param.user_data = &send;
  param.datatype = datatype;
  param.flags = flags;
  ucs_status_ptr_t request =
      ucp_am_send_nbx(worker_.endpoint(send.dst), id, header, header_length, buffer, count, &param);
  if (request == nullptr) {
    FinishSend(&send, UCS_OK);
  } else if (UCS_PTR_IS_ERR(request)) {
    FinishSend(&send, UCS_PTR_STATUS(request));
  }
}

void UcxTransport::OnSendDone(void* request, ucs_status_t status, void* user_data) {
  auto* send = static_cast<OutgoingSend*>(user_data);
  ucp_request_free(request);
  send->transport->CompleteLater(send, status);
}

void UcxTransport::FinishSend(OutgoingSend* send, ucs_status_t status) {
  if (status != UCS_OK) {
    if (send->status == UCS_OK) send->status = status;
    send->path->Failed(*send);
  }
  if (--send->events > 0) return;
  status = send->status;
  std::string error;
  if (status != UCS_OK) {
    error = StrCat("UCX send of ", send->bytes, " bytes to rank ", send->dst,
                   " failed: ", ucs_status_string(status));
    LOG(ERROR) << error;
  }
  std::unique_ptr<OutgoingSend> owned(send);
  if (!send->capped) return;
  // Behind any send already admitted, which may not be posted yet: sends to a peer keep their
  // order.
  const std::vector<OutgoingSend*> ready = limiter_.Complete(send->dst, send->bytes);
  if (!ready.empty()) {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queued_sends_.insert(queued_sends_.end(), ready.begin(), ready.end());
  }
  if (owned->on_sent) owned->on_sent(error);
}

}  // namespace pacer
