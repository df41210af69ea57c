#include "ps/transport/ucx/streamed_path.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>

#include "common/str_cat.h"
#include "ps/transport/ucx/active_message_ids.h"
#include "ps/transport/ucx/segment_pieces.h"

namespace pacer {
namespace {

// A stream's header may declare more than ever comes: without a place given for it, the receiver
// takes at most this much up front and grows the buffer as pieces arrive, so that a false length
// costs no more than this.
constexpr uint64_t kUpFrontBytes = uint64_t{64} << 20;

struct Piece {
  StreamedPath::PieceHeader header;
  const uint8_t* data;
  size_t length;
};

// A streamed payload's pieces, the first with the message's header.
struct Pieces : PathData {
  std::vector<Piece> pieces;
};

}  // namespace

std::vector<unsigned> StreamedPath::message_ids() const {
  return {kStreamHeaderId, kStreamPieceId};
}

bool StreamedPath::Take(OutgoingSend& send) {
  send.message_id = kStreamHeaderId;
  const uint64_t token = next_token_.fetch_add(1);
  send.header.insert(send.header.begin(), reinterpret_cast<const uint8_t*>(&token),
                     reinterpret_cast<const uint8_t*>(&token) + sizeof token);
  // Pieces end where fragments do: a piece is one contiguous send, without a gathering copy.
  // The first rides with the message's header, the others with a PieceHeader.
  auto pieces = std::make_unique<Pieces>();
  uint64_t offset = 0;
  for (const Buffer& f : send.fragments) {
    for (size_t at = 0; at < f.size();) {
      const size_t header = pieces->pieces.empty() ? send.header.size() : sizeof(PieceHeader);
      const size_t length = NextPieceLength(f.size() - at, header, piece_bytes_);
      pieces->pieces.push_back({{token, offset, services_.rank()}, f.data() + at, length});
      offset += length;
      at += length;
    }
  }
  send.events = std::max(1, static_cast<int>(pieces->pieces.size()));  // the header takes the first
  send.path_data = std::move(pieces);
  return true;
}

void StreamedPath::Post(OutgoingSend& send) {
  // The first piece rides with the header: one message, one system call fewer per payload.
  // Every post may complete at once, the last one deleting `send`: nothing of it is read after.
  const std::vector<Piece>& pieces = static_cast<const Pieces&>(*send.path_data).pieces;
  const size_t count = pieces.size();
  const Piece first = count > 0 ? pieces[0] : Piece{{}, nullptr, 0};
  services_.PostActiveMessage(send, kStreamHeaderId, send.header.data(), send.header.size(),
                              first.data, first.length, ucp_dt_make_contig(1),
                              UCP_AM_SEND_FLAG_EAGER);
  for (size_t i = 1; i < count; ++i) {
    const Piece& piece = pieces[i];
    services_.PostActiveMessage(send, kStreamPieceId, &piece.header, sizeof piece.header,
                                piece.data, piece.length, ucp_dt_make_contig(1),
                                UCP_AM_SEND_FLAG_EAGER);
  }
}

ucs_status_t StreamedPath::Receive(unsigned id, const void* header, size_t header_length,
                                   void* data, size_t length, const ucp_am_recv_param_t* param) {
  if (id == kStreamPieceId) return ReceivePiece(header, header_length, data, length, param);
  return ReceiveHeader(header, header_length, data, length, param);
}

ucs_status_t StreamedPath::ReceiveHeader(const void* header, size_t header_length, void* data,
                                         size_t length, const ucp_am_recv_param_t* param) {
  uint64_t token = 0;
  if (header_length < sizeof token || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected a stream's header of " << header_length
               << " bytes";
    return UCS_OK;
  }
  std::memcpy(&token, header, sizeof token);
  DecodedHeader decoded;
  if (!services_.DecodeHeaderOrLog(static_cast<const uint8_t*>(header) + sizeof token,
                                   header_length - sizeof token, &decoded)) {
    return UCS_OK;
  }
  const std::pair<int, uint64_t> id{decoded.meta.sender(), token};
  if (streams_.count(id) > 0) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected rank " << id.first << "'s stream "
               << token << ": one of that token is under way";
    return UCS_OK;
  }
  IncomingStream stream;
  stream.started = std::chrono::steady_clock::now();
  std::string error;
  if ((decoded.wire.flags & WireHeader::kIndexInHeader) &&
      DecodeIndex(decoded, &stream.msg, &error)) {
    stream.msg.consumed_bytes = decoded.wire.vals_bytes;
    stream.consumer = services_.ConsumerFor(stream.msg);
  }
  if (!stream.consumer) {
    stream.out = services_.Place(decoded);
    if (stream.out != nullptr) {
      stream.payload = Buffer(stream.out, decoded.payload_bytes());
    } else {
      stream.payload = services_.pool().Allocate(
          std::min<uint64_t>(decoded.payload_bytes(), kUpFrontBytes), &stream.out);
    }
  }
  stream.header = std::move(decoded);
  IncomingStream& placed = streams_.emplace(id, std::move(stream)).first->second;
  TakePiece(placed, {token, 0, id.first}, static_cast<const uint8_t*>(data), length);
  return UCS_OK;
}

ucs_status_t StreamedPath::ReceivePiece(const void* header, size_t header_length, void* data,
                                        size_t length, const ucp_am_recv_param_t* param) {
  PieceHeader piece{};
  if (header_length != sizeof piece || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected a stream's piece with a header of "
               << header_length << " bytes";
    return UCS_OK;
  }
  std::memcpy(&piece, header, sizeof piece);
  auto it = streams_.find({static_cast<int>(piece.sender), piece.token});
  if (it == streams_.end()) {
    LOG(ERROR) << "rank " << services_.rank() << " rejected a piece of " << length << " bytes at "
               << piece.offset << " from rank " << piece.sender << ": no stream " << piece.token
               << " is under way";
    return UCS_OK;
  }
  TakePiece(it->second, piece, static_cast<const uint8_t*>(data), length);
  return UCS_OK;
}

uint8_t* StreamedPath::Room(IncomingStream& stream, uint64_t offset, size_t length) {
  const uint64_t needed = offset + length;  // at most the declared total (see TakePiece)
  const uint64_t held = stream.payload.size();
  if (needed > held) {
    const uint64_t grown_size = std::min(stream.header.payload_bytes(), std::max(needed, 2 * held));
    uint8_t* out = nullptr;
    Buffer grown = services_.pool().Allocate(grown_size, &out);
    if (stream.received > 0) std::memcpy(out, stream.out, stream.received);
    stream.payload = grown;
    stream.out = out;
  }
  return stream.out + offset;
}

void StreamedPath::TakePiece(IncomingStream& stream, const PieceHeader& piece, const uint8_t* data,
                             size_t length) {
  const uint64_t total = stream.header.payload_bytes();
  if (!stream.failed && (piece.offset != stream.received || length > total - stream.received)) {
    LOG(ERROR) << "rank " << services_.rank() << " dropped rank " << piece.sender
               << "'s payload of " << total << " bytes (" << pacer::Describe(stream.header.meta)
               << "): a piece of " << length << " bytes at " << piece.offset << ", where "
               << stream.received << " bytes had come";
    stream.failed = true;
    stream.consumer.reset();  // what it took stays taken: the sender never learns of success
  }
  if (!stream.failed) {
    try {
      if (stream.consumer) {
        stream.consumer->Consume(piece.offset, data, length);
      } else if (length > 0) {
        std::memcpy(Room(stream, piece.offset, length), data, length);
      }
    } catch (const std::exception& e) {
      LOG(ERROR) << "rank " << services_.rank() << " dropped rank " << piece.sender
                 << "'s payload (" << pacer::Describe(stream.header.meta) << "): " << e.what();
      stream.failed = true;
      stream.consumer.reset();
    }
  }
  stream.received += length;
  if (stream.received < total) return;
  const std::pair<int, uint64_t> id{static_cast<int>(piece.sender), piece.token};
  if (!stream.failed) {
    if (stream.consumer) {
      stream.msg.consumer = std::move(stream.consumer);
      services_.DeliverLater(std::move(stream.msg));
    } else {
      Message msg;
      if (services_.DecodeOrLog(std::move(stream.header), stream.payload, &msg)) {
        services_.DeliverLater(std::move(msg));
      }
    }
  }
  streams_.erase(id);
}

void StreamedPath::DropStaleStreams() {
  if (streams_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(services_.timeout_s());
  for (auto it = streams_.begin(); it != streams_.end();) {
    if (now - it->second.started < limit) {
      ++it;
      continue;
    }
    LOG(ERROR) << "rank " << services_.rank() << " dropped rank " << it->first.first
               << "'s payload (" << pacer::Describe(it->second.header.meta)
               << "): " << it->second.received << " of " << it->second.header.payload_bytes()
               << " bytes came in " << services_.timeout_s() << " s";
    it = streams_.erase(it);
  }
}

}  // namespace pacer
