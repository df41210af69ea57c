#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "meta.pb.h"
#include "pacer/buffer.h"

namespace pacer {

// One Pacer message: protobuf meta plus three binary segments. On the wire the meta travels in a
// small header. When keys and lengths are small (at most kMaxIndexInHeader bytes, the common case)
// they ride in the header too and the payload is the values alone, one contiguous buffer that a
// transport can move without copying; otherwise the payload is keys | lens | padding | vals, with
// values 8-byte aligned. Values may be a gather list (a slice of a caller's buffer per run of
// keys); they are sent without being copied together.
struct Message {
  proto::Meta meta;
  Buffer keys;               // uint64 keys
  Buffer lens;               // int32 value counts per key, or empty: all keys the same length
  std::vector<Buffer> vals;  // values; one buffer in a received message
  // Set where the transport handed the values to a consumer as they arrived (vals is then empty):
  // the consumer, and how many bytes of values it was given.
  std::shared_ptr<class PayloadConsumer> consumer;
  uint64_t consumed_bytes = 0;

  size_t vals_bytes() const;
  size_t num_keys() const { return keys.size() / sizeof(uint64_t); }
  Buffer vals_buffer() const;  // the values as one buffer (the single fragment, or a copy)
};

// The fixed part of the wire header, followed by `meta_bytes` of serialized proto::Meta and, with
// kIndexInHeader, the keys and lengths.
struct WireHeader {
  static constexpr uint32_t kMagic = 0x50414345;  // "PACE"
  static constexpr uint32_t kIndexInHeader = 1;
  uint32_t magic;
  uint32_t meta_bytes;
  uint32_t flags;
  uint32_t reserved;
  uint64_t keys_bytes;
  uint64_t lens_bytes;
  uint64_t vals_bytes;
};

constexpr size_t kMaxIndexInHeader = 1024;

// Serializes the header (WireHeader + meta).
std::vector<uint8_t> EncodeHeader(const Message& msg);
// The payload as a gather list of views into the message's segments (no copy).
std::vector<Buffer> PayloadFragments(const Message& msg);

// A decoded, validated header. DecodeHeader checks everything a header alone can tell: magic,
// sizes, meta, command, sender rank within [0, world_size); it returns false with a reason naming
// the sender and sizes. DecodePayload then checks the payload length and attaches the segments.
struct DecodedHeader {
  WireHeader wire{};
  proto::Meta meta;
  Buffer index;  // keys then lens, when they came in the header
  uint64_t payload_bytes() const;
};
bool DecodeHeader(const void* data, size_t size, int world_size, DecodedHeader* out,
                  std::string* error);
bool DecodePayload(DecodedHeader&& header, Buffer payload, Message* out, std::string* error);
// The meta, keys and lengths of a message whose index came in its header (kIndexInHeader), checked
// as DecodePayload checks them; the values are left out.
bool DecodeIndex(const DecodedHeader& header, Message* out, std::string* error);

// A response's header from `sender`: to the sender of `request`, for its client, request and
// part.
Message ReplyTo(const proto::Meta& request, int sender);

// A PROBE_ECHO's answer from `sender`: the probe's keys and values, sent back whole.
Message EchoOf(Message&& probe, int sender);

// Human-readable one-line description of a message, for logs and errors.
std::string Describe(const proto::Meta& meta);

}  // namespace pacer
