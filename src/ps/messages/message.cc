#include "ps/messages/message.h"

#include <cstring>

#include "common/str_cat.h"

namespace pacer {
namespace {

const uint8_t kZeros[8] = {};

}  // namespace

size_t Message::vals_bytes() const {
  size_t total = 0;
  for (const Buffer& b : vals) total += b.size();
  return total;
}

Buffer Message::vals_buffer() const {
  if (vals.size() == 1) return vals[0];
  uint8_t* out = nullptr;
  Buffer joined = Buffer::Allocate(vals_bytes(), &out);
  for (const Buffer& b : vals) {
    if (b.size() > 0) std::memcpy(out, b.data(), b.size());
    out += b.size();
  }
  return joined;
}

namespace {

bool IndexInHeader(uint64_t keys_bytes, uint64_t lens_bytes) {
  return keys_bytes + lens_bytes <= kMaxIndexInHeader;
}

// Padding that puts values 8-byte aligned after keys and lens in the payload (none without values).
size_t PaddingBeforeValues(uint64_t keys_bytes, uint64_t lens_bytes, uint64_t vals_bytes) {
  return vals_bytes == 0 ? 0 : (8 - (keys_bytes + lens_bytes) % 8) % 8;
}

}  // namespace

uint64_t DecodedHeader::payload_bytes() const {
  if (wire.flags & WireHeader::kIndexInHeader) return wire.vals_bytes;
  return wire.keys_bytes + wire.lens_bytes +
         PaddingBeforeValues(wire.keys_bytes, wire.lens_bytes, wire.vals_bytes) + wire.vals_bytes;
}

std::vector<uint8_t> EncodeHeader(const Message& msg) {
  WireHeader wire{};
  wire.magic = WireHeader::kMagic;
  wire.meta_bytes = static_cast<uint32_t>(msg.meta.ByteSizeLong());
  wire.keys_bytes = msg.keys.size();
  wire.lens_bytes = msg.lens.size();
  wire.vals_bytes = msg.vals_bytes();
  const bool index_in_header = IndexInHeader(wire.keys_bytes, wire.lens_bytes);
  if (index_in_header) wire.flags |= WireHeader::kIndexInHeader;
  size_t index_bytes = index_in_header ? wire.keys_bytes + wire.lens_bytes : 0;
  std::vector<uint8_t> out(sizeof(WireHeader) + wire.meta_bytes + index_bytes);
  std::memcpy(out.data(), &wire, sizeof(wire));
  uint8_t* p = msg.meta.SerializeWithCachedSizesToArray(out.data() + sizeof(wire));
  if (index_in_header) {
    if (!msg.keys.empty()) std::memcpy(p, msg.keys.data(), msg.keys.size());
    if (!msg.lens.empty()) std::memcpy(p + msg.keys.size(), msg.lens.data(), msg.lens.size());
  }
  return out;
}

std::vector<Buffer> PayloadFragments(const Message& msg) {
  std::vector<Buffer> out;
  out.reserve(3 + msg.vals.size());
  if (!IndexInHeader(msg.keys.size(), msg.lens.size())) {
    out.push_back(msg.keys);
    if (!msg.lens.empty()) out.push_back(msg.lens);
    size_t pad = PaddingBeforeValues(msg.keys.size(), msg.lens.size(), msg.vals_bytes());
    if (pad > 0) out.emplace_back(kZeros, pad);
  }
  for (const Buffer& b : msg.vals) {
    if (!b.empty()) out.push_back(b);
  }
  return out;
}

namespace {

bool Reject(std::string* error, std::string why) {
  *error = std::move(why);
  return false;
}

// What is wrong with a parsed header, or "" if nothing is.
std::string MetaProblem(const WireHeader& w, const proto::Meta& m, int world_size) {
  if (m.sender() < 0 || m.sender() >= world_size) {
    return StrCat("sender rank outside [0, ", world_size, ")");
  }
  if (!proto::Command_IsValid(m.command()) || m.command() == proto::COMMAND_UNSPECIFIED) {
    return StrCat("unknown command ", static_cast<int>(m.command()));
  }
  if (w.keys_bytes % sizeof(uint64_t) != 0) {
    return StrCat("keys segment of ", w.keys_bytes, " bytes is not a whole number of 8-byte keys");
  }
  if (w.lens_bytes % sizeof(int32_t) != 0) {
    return StrCat("lens segment of ", w.lens_bytes, " bytes is not a whole number of int32");
  }
  if (w.lens_bytes != 0 && w.lens_bytes / 4 != w.keys_bytes / 8) {
    return StrCat(w.lens_bytes / 4, " lengths for ", w.keys_bytes / 8, " keys");
  }
  if (w.vals_bytes > 0 && m.value_size() <= 0) {
    return StrCat(w.vals_bytes, " bytes of values with value size ", m.value_size());
  }
  if (w.vals_bytes > 0 && w.vals_bytes % m.value_size() != 0) {
    return StrCat(w.vals_bytes, " bytes of values is not a multiple of value size ",
                  m.value_size());
  }
  const bool report = m.command() == proto::ITERATION_REPORT || m.command() == proto::SERVER_REPORT;
  if (w.vals_bytes > 0 && w.keys_bytes == 0 && !report) {
    return StrCat(w.vals_bytes, " bytes of values without keys");
  }
  if (w.keys_bytes > (uint64_t{1} << 40) || w.vals_bytes > (uint64_t{1} << 40)) {
    return StrCat("implausible segment sizes (keys ", w.keys_bytes, ", values ", w.vals_bytes,
                  " bytes)");
  }
  return "";
}

}  // namespace

bool DecodeHeader(const void* data, size_t size, int world_size, DecodedHeader* out,
                  std::string* error) {
  if (size < sizeof(WireHeader)) {
    return Reject(error,
                  StrCat("truncated header: ", size, " bytes, need at least ", sizeof(WireHeader)));
  }
  std::memcpy(&out->wire, data, sizeof(WireHeader));
  const WireHeader& w = out->wire;
  if (w.magic != WireHeader::kMagic)
    return Reject(error, StrCat("bad magic 0x", std::hex, w.magic));
  const bool index_in_header = w.flags & WireHeader::kIndexInHeader;
  const uint64_t index_bytes = index_in_header ? w.keys_bytes + w.lens_bytes : 0;
  if (w.flags & ~WireHeader::kIndexInHeader ||
      (index_in_header && index_bytes > kMaxIndexInHeader) ||
      size != sizeof(WireHeader) + w.meta_bytes + index_bytes) {
    return Reject(
        error, StrCat("header of ", size, " bytes declares ", w.meta_bytes, " bytes of meta and ",
                      index_bytes, " bytes of keys and lengths (flags ", w.flags, ")"));
  }
  const uint8_t* meta = static_cast<const uint8_t*>(data) + sizeof(WireHeader);
  if (!out->meta.ParseFromArray(meta, static_cast<int>(w.meta_bytes))) {
    return Reject(error, StrCat("unparsable meta (", w.meta_bytes, " bytes)"));
  }
  std::string problem = MetaProblem(w, out->meta, world_size);
  if (!problem.empty()) {
    return Reject(error, StrCat("message from rank ", out->meta.sender(), " (", Describe(out->meta),
                                "): ", problem));
  }
  if (index_in_header) out->index = Buffer::Copy(meta + w.meta_bytes, index_bytes);
  return true;
}

namespace {

// Attaches `index` (keys then lens) to `out` and checks the lengths against the declared values.
bool AttachIndex(const WireHeader& w, const Buffer& index, Message* out, std::string* error) {
  out->keys = index.Slice(0, w.keys_bytes);
  out->lens = index.Slice(w.keys_bytes, w.lens_bytes);
  const int32_t* lens = out->lens.as<int32_t>();
  uint64_t declared = 0;
  for (size_t i = 0; i < out->lens.count<int32_t>(); ++i) {
    if (lens[i] < 0) {
      return Reject(error, StrCat("message from rank ", out->meta.sender(), ": negative length ",
                                  lens[i], " for key ", out->keys.as<uint64_t>()[i]));
    }
    declared += static_cast<uint64_t>(lens[i]) * out->meta.value_size();
  }
  if (w.lens_bytes > 0 && declared != w.vals_bytes) {
    return Reject(error, StrCat("message from rank ", out->meta.sender(), " (", Describe(out->meta),
                                "): lengths add up to ", declared,
                                " bytes of values, payload carries ", w.vals_bytes));
  }
  return true;
}

}  // namespace

bool DecodePayload(DecodedHeader&& header, Buffer payload, Message* out, std::string* error) {
  const WireHeader& w = header.wire;
  if (payload.size() != header.payload_bytes()) {
    return Reject(error, StrCat("message from rank ", header.meta.sender(), " (",
                                Describe(header.meta), "): payload of ", payload.size(),
                                " bytes, header declares ", header.payload_bytes()));
  }
  out->meta = std::move(header.meta);
  size_t vals_offset = 0;
  const bool in_header = w.flags & WireHeader::kIndexInHeader;
  if (!in_header) {
    vals_offset =
        w.keys_bytes + w.lens_bytes + PaddingBeforeValues(w.keys_bytes, w.lens_bytes, w.vals_bytes);
  }
  if (!AttachIndex(w, in_header ? header.index : payload, out, error)) return false;
  out->vals.clear();
  if (w.vals_bytes > 0) out->vals.push_back(payload.Slice(vals_offset, w.vals_bytes));
  return true;
}

bool DecodeIndex(const DecodedHeader& header, Message* out, std::string* error) {
  if (!(header.wire.flags & WireHeader::kIndexInHeader)) {
    return Reject(error, StrCat("message from rank ", header.meta.sender(),
                                ": its keys do not come in its header"));
  }
  out->meta = header.meta;
  out->vals.clear();
  return AttachIndex(header.wire, header.index, out, error);
}

std::string Describe(const proto::Meta& meta) {
  return StrCat(proto::Command_Name(meta.command()), meta.is_response() ? " response" : "",
                " request_id=", meta.request_id(), " app=", meta.app_id(),
                " client=", meta.client_id());
}

Message EchoOf(Message&& probe, int sender) {
  Message reply = ReplyTo(probe.meta, sender);
  reply.keys = std::move(probe.keys);
  reply.vals = std::move(probe.vals);
  reply.meta.set_value_size(probe.meta.value_size());
  return reply;
}

Message ReplyTo(const proto::Meta& request, int sender) {
  Message reply;
  reply.meta.set_command(request.command());
  reply.meta.set_is_response(true);
  reply.meta.set_sender(sender);
  reply.meta.set_app_id(request.app_id());
  reply.meta.set_client_id(request.client_id());
  reply.meta.set_request_id(request.request_id());
  reply.meta.set_part(request.part());
  return reply;
}

}  // namespace pacer
