#include "ps/transport/ucx/ring_path.h"

#include <glog/logging.h>

#include <cstring>
#include <memory>

#include "common/str_cat.h"
#include "ps/transport/ucx/active_message_ids.h"

namespace pacer {
namespace {

// What goes on the wire instead of the payload; it lives as long as the send.
struct Location : PathData {
  SharedMemoryLocation where;
};

}  // namespace

std::vector<unsigned> RingPath::message_ids() const { return {kRingMessageId}; }

bool RingPath::Take(OutgoingSend& send) {
  const std::optional<SharedMemoryLocation> where =
      routes_.Write(send.dst, send.fragments, static_cast<size_t>(send.bytes));
  if (!where) return false;
  auto location = std::make_unique<Location>();
  location->where = *where;
  send.message_id = kRingMessageId;
  send.fragments = {Buffer(&location->where, sizeof location->where)};
  send.bytes = sizeof location->where;
  send.path_data = std::move(location);
  return true;
}

ucs_status_t RingPath::Receive(unsigned id, const void* header, size_t header_length, void* data,
                               size_t length, const ucp_am_recv_param_t* param) {
  DecodedHeader decoded;
  std::string error;
  Buffer payload;
  if (!DecodeHeader(header, header_length, services_.size(), &decoded, &error)) {
    // `error` says why
  } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    error = StrCat("rank ", decoded.meta.sender(), " sent a shared-memory location of ", length,
                   " bytes by rendezvous");
  } else {
    routes_.Read(decoded.meta.sender(), data, length, decoded.payload_bytes(), &payload, &error);
  }
  if (!error.empty()) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected a message: " << error;
    return UCS_OK;
  }
  if (uint8_t* out = services_.Place(decoded)) {
    std::memcpy(out, payload.data(), payload.size());
    payload = Buffer(out, payload.size());
  }
  Message msg;
  if (services_.DecodeOrLog(std::move(decoded), payload, &msg)) {
    services_.DeliverLater(std::move(msg));
  }
  return UCS_OK;
}

}  // namespace pacer
