// UcxTransport's described payloads: a payload that stays in its sender's memory, a message that
// says where, the receiver's copy out of it, and the release on which the sender's send
// completes.
#include <glog/logging.h>

#include <cstring>

#include "ps/str_cat.h"
#include "ps/transport/ucx_transport.h"

namespace pacer {
namespace {

// What a kReleaseMessageId carries, in its header.
struct Release {
  uint64_t token;
  int64_t rank;  // the releasing rank
};

}  // namespace

void UcxTransport::Describe(SendContext* ctx) {
  ctx->message_id = kDescribedMessageId;
  ctx->token = next_token_.fetch_add(1);
  ctx->events = 2;
  ctx->described = std::move(ctx->fragments);
  ctx->description = SharedMemoryRoutes::Describe(ctx->token, ctx->described);
  ctx->fragments = {Buffer(ctx->description.data(), ctx->description.size())};
  // limiter_ counts the description: the payload does not move until the reader copies it, and
  // the reader's own requests pace that.
  ctx->bytes = static_cast<int64_t>(ctx->description.size());
}

ucs_status_t UcxTransport::OnDescribedMessage(void* arg, const void* header, size_t header_length,
                                              void* data, size_t length,
                                              const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxTransport*>(arg);
  DecodedHeader decoded;
  // Without a sender to release to, its payload stays until it stops.
  if (!self->DecodeHeaderOrLog(header, header_length, &decoded)) return UCS_OK;
  std::string error;
  const int sender = decoded.meta.sender();
  uint64_t token = 0;
  Buffer payload;
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    error =
        StrCat("rank ", sender, " sent a payload description of ", length, " bytes by rendezvous");
  } else {
    uint8_t* out = self->placer_ ? self->placer_(decoded) : nullptr;
    payload = out != nullptr ? Buffer(out, decoded.payload_bytes())
                             : self->pool_.Allocate(decoded.payload_bytes(), &out);
    self->shared_memory_->ReadDescribed(sender, data, length, decoded.payload_bytes(), out, &token,
                                        &error);
  }
  if (token != 0) self->QueueRelease(sender, token);
  if (!error.empty()) {
    LOG(ERROR) << "rank " << self->rank_ << " rejected a message: " << error;
    return UCS_OK;
  }
  Message msg;
  if (self->Decode(std::move(decoded), payload, &msg)) self->received_.push_back(std::move(msg));
  return UCS_OK;
}

// Queued past limiter_, never behind it: a release makes room in the sender's limiter, so two ranks
// whose queues waited on each other's releases would wait forever.
void UcxTransport::QueueRelease(int sender, uint64_t token) {
  auto* ctx = new SendContext();
  ctx->dst = sender;
  ctx->message_id = kReleaseMessageId;
  ctx->bytes = 0;
  ctx->transport = this;
  const Release release{token, rank_};
  ctx->header.resize(sizeof release);
  std::memcpy(ctx->header.data(), &release, sizeof release);
  std::lock_guard<std::mutex> lock(queue_mu_);
  queued_sends_.push_back(ctx);
}

ucs_status_t UcxTransport::OnRelease(void* arg, const void* header, size_t header_length,
                                     void* data, size_t length, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxTransport*>(arg);
  Release release{};
  if (header_length != sizeof release || length != 0) {
    LOG(ERROR) << "rank " << self->rank_ << " rejected a release of " << header_length
               << " header and " << length << " payload bytes";
    return UCS_OK;
  }
  std::memcpy(&release, header, sizeof release);
  auto it = self->awaiting_release_.find(release.token);
  if (it == self->awaiting_release_.end() || it->second->dst != release.rank) {
    LOG(ERROR) << "rank " << self->rank_ << " rejected rank " << release.rank
               << "'s release of payload " << release.token << ": "
               << (it == self->awaiting_release_.end()
                       ? "no such payload awaits release"
                       : StrCat("it went to rank ", it->second->dst));
    return UCS_OK;
  }
  self->sends_done_.emplace_back(it->second, UCS_OK);
  self->awaiting_release_.erase(it);
  return UCS_OK;
}

}  // namespace pacer
