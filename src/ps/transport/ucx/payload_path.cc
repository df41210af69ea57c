#include "ps/transport/ucx/payload_path.h"

#include <glog/logging.h>

#include <cstring>

namespace pacer {

void PathServices::PostWhole(OutgoingSend& send, unsigned id, uint32_t flags) {
  const void* buffer = nullptr;
  size_t count = 0;
  ucp_datatype_t datatype = ucp_dt_make_contig(1);
  if (send.iov.size() == 1) {
    buffer = send.iov[0].buffer;
    count = send.iov[0].length;
  } else if (send.iov.size() > 1) {
    buffer = send.iov.data();
    count = send.iov.size();
    datatype = ucp_dt_make_iov();
  }
  PostActiveMessage(send, id, send.header.data(), send.header.size(), buffer, count, datatype,
                    flags);
}

bool PathServices::DecodeHeaderOrLog(const void* header, size_t length, DecodedHeader* decoded) {
  std::string error;
  if (DecodeHeader(header, length, size(), decoded, &error)) return true;
  LOG(ERROR) << "rank " << rank() << " rejected a message: " << error;
  return false;
}

bool PathServices::DecodeOrLog(DecodedHeader&& header, const Buffer& payload, Message* msg) {
  std::string error;
  if (DecodePayload(std::move(header), payload, msg, &error)) return true;
  LOG(ERROR) << "rank " << rank() << " rejected a message: " << error;
  return false;
}

Buffer PathServices::Destination(const DecodedHeader& header, size_t bytes, uint8_t** out) {
  *out = Place(header);
  return *out != nullptr ? Buffer(*out, bytes) : pool().Allocate(bytes, out);
}

void PathServices::DeliverCopy(DecodedHeader&& header, const void* data, size_t length) {
  uint8_t* copy = nullptr;
  Buffer payload = pool().Allocate(length, &copy);
  if (length > 0) std::memcpy(copy, data, length);
  Message msg;
  if (DecodeOrLog(std::move(header), payload, &msg)) DeliverLater(std::move(msg));
}

}  // namespace pacer
