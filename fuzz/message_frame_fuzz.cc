// A message from a peer, as the transports decode it: the header (wire fields, meta, an index in
// the header), then the payload the header announces, from the input's remaining bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ps/messages/message.h"
#include "ps/messages/request_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pacer;
  if (size < sizeof(WireHeader)) return 0;
  const WireHeader* wire = reinterpret_cast<const WireHeader*>(data);
  const size_t header_bytes = sizeof(WireHeader) + wire->meta_bytes;
  if (header_bytes > size) return 0;  // the transports read a header whole before decoding it
  DecodedHeader header;
  std::string error;
  if (!DecodeHeader(data, header_bytes, /*world_size=*/8, &header, &error)) return 0;
  Message indexed;
  DecodeIndex(header, &indexed, &error);
  const Buffer payload = Buffer::Copy(data + header_bytes, size - header_bytes);
  Message msg;
  if (!DecodePayload(std::move(header), payload, &msg, &error)) return 0;
  const size_t keys = msg.keys.size() / sizeof(Key);
  const size_t lens = msg.lens.size() / sizeof(int32_t);
  ValidateKeyValues(msg.keys.as<Key>(), keys, msg.lens.as<int32_t>(), lens,
                    msg.vals.size() / sizeof(float), /*push=*/true);
  Describe(msg.meta);
  return 0;
}
