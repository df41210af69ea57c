#include "ps/transport/ucx/described_path.h"

#include <glog/logging.h>

#include <cstring>
#include <memory>

#include "common/str_cat.h"
#include "ps/transport/ucx/active_message_ids.h"

namespace pacer {
namespace {

// A described payload's fragments, kept until the receiver releases them, and the description
// that goes instead.
struct Described : PathData {
  std::vector<Buffer> fragments;
  std::vector<uint8_t> description;
  uint64_t token = 0;
};

// What a kReleaseMessageId carries, in its header.
struct Release {
  uint64_t token;
  int64_t rank;  // the releasing rank
};

// The token of a described send (Take gave it a Described); 0 for a release.
uint64_t TokenOf(const OutgoingSend& send) {
  if (send.message_id != kDescribedMessageId) return 0;
  return static_cast<const Described&>(*send.path_data).token;
}

}  // namespace

std::vector<unsigned> DescribedPath::message_ids() const {
  return {kDescribedMessageId, kReleaseMessageId};
}

bool DescribedPath::Take(OutgoingSend& send) {
  if (!routes_.ReadsOurs(send.dst)) return false;
  auto described = std::make_unique<Described>();
  described->token = next_token_.fetch_add(1);
  described->fragments = std::move(send.fragments);
  described->description = routes_.Describe(described->token, described->fragments);
  send.message_id = kDescribedMessageId;
  send.events = 2;  // its own completion and the release
  send.fragments = {Buffer(described->description.data(), described->description.size())};
  // The cap counts the description: the payload does not move until the reader copies it, and
  // the reader's own requests pace that.
  send.bytes = static_cast<int64_t>(described->description.size());
  send.path_data = std::move(described);
  return true;
}

void DescribedPath::Post(OutgoingSend& send) {
  if (send.message_id == kReleaseMessageId) {
    services_.PostActiveMessage(send, kReleaseMessageId, send.header.data(), send.header.size(),
                                nullptr, 0, ucp_dt_make_contig(1), 0);
    return;
  }
  // Before the send: the release may be handled before the send's own completion.
  awaiting_release_[TokenOf(send)] = &send;
  services_.PostWhole(send, kDescribedMessageId, 0);
}

// A described payload whose description failed will not be released.
void DescribedPath::Failed(OutgoingSend& send) {
  const uint64_t token = TokenOf(send);
  if (token != 0 && awaiting_release_.erase(token) > 0) --send.events;
}

ucs_status_t DescribedPath::Receive(unsigned id, const void* header, size_t header_length,
                                    void* data, size_t length, const ucp_am_recv_param_t* param) {
  if (id == kReleaseMessageId) return ReceiveRelease(header, header_length, length);
  return ReceiveDescription(header, header_length, data, length, param);
}

ucs_status_t DescribedPath::ReceiveDescription(const void* header, size_t header_length, void* data,
                                               size_t length, const ucp_am_recv_param_t* param) {
  DecodedHeader decoded;
  if (!services_.DecodeHeaderOrLog(header, header_length, &decoded)) {
    // Handed back all the same (the description names its sender), or the send never completes.
    uint64_t token = 0;
    int64_t owner = -1;
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) &&
        SharedMemoryRoutes::ReleaseOf(data, length, &token, &owner) && token != 0 && owner >= 0 &&
        owner < services_.size()) {
      QueueRelease(static_cast<int>(owner), token);
    }
    return UCS_OK;
  }
  std::string error;
  const int sender = decoded.meta.sender();
  uint64_t token = 0;
  Buffer payload;
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    error =
        StrCat("rank ", sender, " sent a payload description of ", length, " bytes by rendezvous");
  } else {
    // Memory only for a description that proved to describe the payload its header declares.
    auto destination = [&] {
      uint8_t* out = nullptr;
      payload = services_.Destination(decoded, decoded.payload_bytes(), &out);
      return out;
    };
    routes_.ReadDescribed(sender, data, length, decoded.payload_bytes(), destination, &token,
                          &error);
  }
  if (token != 0) QueueRelease(sender, token);
  if (!error.empty()) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected a message: " << error;
    return UCS_OK;
  }
  Message msg;
  if (services_.DecodeOrLog(std::move(decoded), payload, &msg)) {
    services_.DeliverLater(std::move(msg));
  }
  return UCS_OK;
}

void DescribedPath::QueueRelease(int sender, uint64_t token) {
  auto* send = new OutgoingSend();
  send->dst = sender;
  send->path = this;
  send->message_id = kReleaseMessageId;
  send->capped = false;
  const Release release{token, services_.rank()};
  send->header.resize(sizeof release);
  std::memcpy(send->header.data(), &release, sizeof release);
  services_.QueueUncapped(send);
}

ucs_status_t DescribedPath::ReceiveRelease(const void* header, size_t header_length,
                                           size_t length) {
  Release release{};
  if (header_length != sizeof release || length != 0) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected a release of " << header_length
               << " header and " << length << " payload bytes";
    return UCS_OK;
  }
  std::memcpy(&release, header, sizeof release);
  auto it = awaiting_release_.find(release.token);
  if (it == awaiting_release_.end() || it->second->dst != release.rank) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected rank " << release.rank
               << "'s release of payload " << release.token << ": "
               << (it == awaiting_release_.end() ? "no such payload awaits release"
                                                 : StrCat("it went to rank ", it->second->dst));
    return UCS_OK;
  }
  services_.CompleteLater(it->second, UCS_OK);
  awaiting_release_.erase(it);
  return UCS_OK;
}

}  // namespace pacer
