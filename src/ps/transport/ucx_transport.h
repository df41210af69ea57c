#pragma once

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pacer/config.h"
#include "ps/buffer_pool.h"
#include "ps/transport/inflight_limiter.h"
#include "ps/transport/shared_memory_routes.h"
#include "ps/transport/transport.h"

namespace pacer {

// UCP active messages between all ranks of an MPI communicator. Endpoints are created from worker
// addresses exchanged with MPI_Allgatherv. The wire header rides in the active message's header and
// the payload is sent as it lies (contiguous, or an iov: no gathering copy); payloads of at least
// rndv_threshold go by rendezvous, copied once between the caller's memory and a pooled buffer.
//
// One thread at a time drives UCX (its worker runs in serialized mode, without UCX's own locks):
// whoever holds progress_mu_. Usually that is the progress thread, which polls for at most spin_us
// after the last activity, then blocks on the worker's event fd, so idle ranks leave the cores to
// busy ones. A thread waiting for a reply drives it instead (PollUntil) while the progress thread
// steps aside: the reply is handled where it is awaited, and a 2-core host keeps one polling
// thread per process, not two. A sending thread posts its send itself when no one else is driving,
// else queues it for the driver. Throws Error if UCX does not initialize.
//
// A rank whose sender writes (kSenderWrites) also has a SharedMemoryRing, which the ranks on its
// host map when the transport starts (SharedMemoryRoutes): its payloads from rndv_threshold to the
// ring's max_payload() go to them through the ring, the message carrying only their location
// (config.shm_ring_bytes; 0, or a UCX_TLS without shared memory, turns it off).
//
// A rank whose receiver reads (kReceiverReads) sends its large payloads to the ranks on its host
// that can read its memory as descriptions of where they lie; the receiver copies them out with
// config.read_threads threads and releases them with a small message, on which the send
// completes. This is UCX's own rendezvous by cross-memory copy, less one round trip and with the
// copy split over threads. Pulls, window 8, on a 2-core Intel Xeon VM (4 interleaved pairs):
// 16 MiB 8.5-11.1 against 4.5-5.9 GB/s by UCX; 1 MiB 7.7-14.1 against 6.4-8.8.
//
// Over TCP only (a UCX_TLS without shared memory), a rank whose sender writes sends its large
// payloads in pieces of config.stream_piece_bytes, the first with the header, each an eager
// active message that UCX hands over from its receive buffer. Where the receiver's
// PayloadConsumerFactory gives a consumer, it takes the pieces there (a server sums them into its
// store while they are in cache); else they are copied into place. Pieces of one payload come in
// order on the endpoint's one lane; a payload missing pieces for timeout_s is dropped (looked for
// on the passes that find nothing to do).
//
// Such a rank's thread also counts as a driver while it posts its own send, so the progress thread
// stays aside: the kernel moves a streamed payload within the posting thread's own calls, and a
// progress thread woken meanwhile (by the completions its caller comes back for) only contends for
// the socket and the caller's core (1 MiB pushes at window 8 in one-segment pieces, 2-core AMD EPYC
// VM: 4.24-4.68 against 3.85-4.21 GB/s, medians of 20 and 16 interleaved turns, faster in 16 and
// 13 of them). Over shared memory the progress thread's work is a copy of its own beside the
// caller's (a described payload, a ring's record), and there the same rule made pulls at window 8
// 18-26% slower and 64 KiB pushes 8-20%.
class UcxTransport : public Transport {
 public:
  // How this rank's large payloads move, unless UCX_RNDV_SCHEME says otherwise (the sender's
  // choice decides). A copy between processes pins the other process's pages, so the side whose
  // buffers lie on huge pages (a server's pool) should be the other one: kSenderWrites (UCX put)
  // for callers' memory sent into pooled buffers, kReceiverReads (get) for pooled values.
  // Measured, 1 MiB pulls: 13.5-19 GB/s read by the worker, 7.5-10.7 written by the server.
  enum class Rendezvous { kSenderWrites, kReceiverReads };

  // Takes ownership of `comm`.
  UcxTransport(MPI_Comm comm, const Config& config, Rendezvous rendezvous);
  ~UcxTransport() override;

  std::string name() const override { return "ucx"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Start(ReceiveHandler handler, PayloadPlacer placer) override;
  void SetPayloadConsumers(PayloadConsumerFactory factory) override {
    consumers_ = std::move(factory);
  }
  void SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                 SendCallback on_sent) override;
  void Stop() override;
  std::shared_ptr<void> LendSharedMemory(size_t bytes) override {
    return shared_memory_->Lend(bytes);
  }
  bool PollUntil(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline,
                 std::chrono::microseconds spin) override;

 private:
  // The active messages' ids.
  static constexpr unsigned kActiveMessageId = 7;
  static constexpr unsigned kRingMessageId = 8;  // the payload lies in the sender's ring
  // The payload lies in the sender's memory, where the receiver reads it (a description of
  // where), and the sender keeps it until the receiver's kReleaseMessageId hands it back.
  static constexpr unsigned kDescribedMessageId = 9;
  static constexpr unsigned kReleaseMessageId = 10;
  // A streamed payload: its message's header (after the stream's token) with its first piece,
  // then the other pieces.
  static constexpr unsigned kStreamHeaderId = 11;
  static constexpr unsigned kStreamPieceId = 12;

  // What a kStreamPieceId carries in its header, before its piece of the payload.
  struct PieceHeader {
    uint64_t token;
    uint64_t offset;  // of the piece in the payload
    int64_t sender;
  };
  struct Piece {
    PieceHeader header;
    const uint8_t* data;
    size_t length;
  };

  struct SendContext {
    int dst;
    unsigned message_id = kActiveMessageId;
    int64_t bytes;
    SharedMemoryLocation location;  // what a message of kRingMessageId carries
    std::vector<uint8_t> header;
    std::vector<Buffer> fragments;  // their owners keep the payload alive until completion
    // A described payload (kDescribedMessageId): its fragments, kept until `dst` releases them
    // under `token`, and the description that goes instead. Such a send completes on two events,
    // its own and the release; every other send on one.
    std::vector<Buffer> described;
    std::vector<uint8_t> description;
    uint64_t token = 0;
    // A streamed payload (kStreamHeaderId): its pieces, the first with the header. Such a send
    // completes when every piece went.
    std::vector<Piece> pieces;
    int events = 1;
    ucs_status_t status = UCS_OK;  // the first failure of the send's events
    std::vector<ucp_dt_iov_t> iov;
    SendCallback on_sent;
    UcxTransport* transport;
  };
  struct RndvReceive;
  // A streamed payload being received: given to a consumer (`msg` then holds the message, less
  // its values), or copied into `payload` (then decoded from `header` once whole).
  struct IncomingStream {
    DecodedHeader header;
    Message msg;
    std::shared_ptr<PayloadConsumer> consumer;
    Buffer payload;
    uint8_t* out = nullptr;
    uint64_t received = 0;
    bool failed = false;  // a piece was out of place: the rest are counted and dropped
    std::chrono::steady_clock::time_point started;
  };

  static ucs_status_t OnActiveMessage(void* arg, const void* header, size_t header_length,
                                      void* data, size_t length, const ucp_am_recv_param_t* param);
  static void OnSendDone(void* request, ucs_status_t status, void* user_data);
  static void OnRndvDone(void* request, ucs_status_t status, size_t length, void* user_data);

  static ucs_status_t OnSharedMemoryMessage(void* arg, const void* header, size_t header_length,
                                            void* data, size_t length,
                                            const ucp_am_recv_param_t* param);
  static ucs_status_t OnDescribedMessage(void* arg, const void* header, size_t header_length,
                                         void* data, size_t length,
                                         const ucp_am_recv_param_t* param);
  static ucs_status_t OnRelease(void* arg, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t OnStreamHeader(void* arg, const void* header, size_t header_length,
                                     void* data, size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t OnStreamPiece(void* arg, const void* header, size_t header_length, void* data,
                                    size_t length, const ucp_am_recv_param_t* param);

  void SetHandler(unsigned id, ucp_am_recv_callback_t callback);
  // How a payload of at least rndv_threshold goes: copied into the ring, its location sent instead,
  // when the ring can take it; else described, where the receiver reads this rank's memory; else
  // by UCX's rendezvous, joined into one buffer first.
  void RouteLargePayload(SendContext* ctx);
  // Sends a description of the payload instead, keeping the payload until it is released.
  void Describe(SendContext* ctx);
  // Cuts the payload into pieces to stream.
  void CutIntoPieces(SendContext* ctx);
  // Posts a streamed payload's header and pieces.
  void PostStream(SendContext* ctx);
  // Posts one active message of `ctx`; its completion is one of ctx's events.
  void PostActiveMessage(SendContext* ctx, unsigned id, const void* header, size_t header_length,
                         const void* buffer, size_t count, ucp_datatype_t datatype, uint32_t flags);
  // Hands a stream's piece to its consumer or copies it into place.
  void TakePiece(IncomingStream& stream, const PieceHeader& piece, const uint8_t* data,
                 size_t length);
  // Drops the streams that waited for pieces for longer than timeout_s.
  void DropStaleStreams();
  // Queues the message that hands a described payload back to `sender`.
  void QueueRelease(int sender, uint64_t token);
  // Decode a received message's header, or all of it; log why and return false when it is
  // malformed.
  bool DecodeHeaderOrLog(const void* header, size_t length, DecodedHeader* decoded);
  bool Decode(DecodedHeader&& header, const Buffer& payload, Message* msg);
  void Post(SendContext* ctx);
  void FinishSend(SendContext* ctx, ucs_status_t status);
  void StartRndvReceive(RndvReceive* rndv);
  void FinishRndvReceive(RndvReceive* rndv, ucs_status_t status);
  void ProgressLoop();
  // One pass of UCX progress and of the work it found; the caller holds progress_mu_.
  bool Drive();
  bool RunDeferredWork();
  bool PostQueuedSends();  // returns whether it posted any
  bool HasQueuedSends();
  void CloseEndpoints();

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 0;
  int spin_us_ = 0;
  double timeout_s_;
  size_t rndv_threshold_;
  const bool describes_;           // large payloads to readers on this host go as descriptions
  size_t stream_piece_bytes_ = 0;  // large payloads go streamed in pieces of this size; 0: never

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<ucp_ep_h> endpoints_;
  int event_fd_ = -1;
  int epoll_fd_ = -1;

  ReceiveHandler handler_;
  PayloadPlacer placer_;
  PayloadConsumerFactory consumers_;
  InflightLimiter<SendContext*> limiter_;
  BufferPool pool_;
  std::unique_ptr<SharedMemoryRoutes> shared_memory_;
  std::atomic<uint64_t> next_token_{1};
  std::unordered_map<uint64_t, SendContext*>
      awaiting_release_;  // by token; guarded by progress_mu_
  // Streamed payloads being received, by sender and token; guarded by progress_mu_.
  std::map<std::pair<int, uint64_t>, IncomingStream> streams_;
  std::thread progress_thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> sleeping_{false};  // the progress thread is (about to be) blocked
  std::mutex progress_mu_;             // held by the thread driving UCX
  // Threads driving on their own account (in PollUntil or, where this rank streams, posting); the
  // progress thread steps aside meanwhile.
  std::atomic<int> drivers_{0};
  bool started_ = false;
  bool stopped_ = false;

  // Sends admitted by other threads, posted by the progress thread.
  std::mutex queue_mu_;
  std::vector<SendContext*> queued_sends_;

  // Work found inside UCX callbacks, run by the driver outside them, so that handlers and
  // completion callbacks may call Send. Guarded by progress_mu_.
  std::vector<Message> received_;
  std::vector<RndvReceive*> rndv_to_start_;
  std::vector<std::pair<RndvReceive*, ucs_status_t>> rndv_done_;
  std::vector<std::pair<SendContext*, ucs_status_t>> sends_done_;
};

// Whether UCX_TLS (`tls`, or null when unset) lets UCX use shared memory. A job that names its
// transports (UCX_TLS=tcp) gets only those: no ring either.
bool UcxTlsAllowsSharedMemory(const char* tls);

}  // namespace pacer
