#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "ps/transport/ucx/payload_path.h"

namespace pacer {

// A large payload over TCP alone, as pieces: the message's header with the first piece, then the
// other pieces, each an eager active message. The receiver hands each piece to the message's
// consumer straight from UCX's receive buffer (a server sums a pushed piece into its store while
// it is in cache, instead of receiving the whole payload into memory it then reads again), or
// copies it into place. Pieces of one payload come in order on the endpoint's one lane; a payload
// still missing pieces after timeout_s is dropped.
class StreamedPath : public PayloadPath {
 public:
  // Pieces of about `piece_bytes` (NextPieceLength cuts them to fill whole TCP segments).
  StreamedPath(PathServices& services, size_t piece_bytes)
      : PayloadPath(services), piece_bytes_(piece_bytes) {}

  const char* name() const override { return "streamed"; }
  std::vector<unsigned> message_ids() const override;
  bool Take(OutgoingSend& send) override;
  void Post(OutgoingSend& send) override;
  ucs_status_t Receive(unsigned id, const void* header, size_t header_length, void* data,
                       size_t length, const ucp_am_recv_param_t* param) override;
  // Drops the streams that waited for pieces for longer than timeout_s (the driver calls it on
  // the passes that found nothing to do: a stream missing its pieces leaves the driver idle).
  void DropStaleStreams();

  // What a kStreamPieceId carries in its header, before its piece of the payload.
  struct PieceHeader {
    uint64_t token;
    uint64_t offset;  // of the piece in the payload
    int64_t sender;
  };

 private:
  // A streamed payload being received: given to a consumer (`msg` then holds the message, less
  // its values), or copied into `payload` (then decoded from `header` once whole).
  struct IncomingStream {
    DecodedHeader header;
    Message msg;
    std::shared_ptr<PayloadConsumer> consumer;
    Buffer payload;
    uint8_t* out = nullptr;  // the payload's bytes, which may hold less than the header declares
    uint64_t received = 0;
    bool failed = false;  // a piece was out of place: the rest are counted and dropped
    std::chrono::steady_clock::time_point started;
  };

  ucs_status_t ReceiveHeader(const void* header, size_t header_length, void* data, size_t length,
                             const ucp_am_recv_param_t* param);
  ucs_status_t ReceivePiece(const void* header, size_t header_length, void* data, size_t length,
                            const ucp_am_recv_param_t* param);
  // Where the next `length` bytes of `stream` go, its buffer grown to take them.
  uint8_t* Room(IncomingStream& stream, uint64_t offset, size_t length);
  // Hands a stream's piece to its consumer or copies it into place.
  void TakePiece(IncomingStream& stream, const PieceHeader& piece, const uint8_t* data,
                 size_t length);

  const size_t piece_bytes_;
  std::atomic<uint64_t> next_token_{1};
  // Streamed payloads being received, by sender and token; driver only.
  std::map<std::pair<int, uint64_t>, IncomingStream> streams_;
};

}  // namespace pacer
