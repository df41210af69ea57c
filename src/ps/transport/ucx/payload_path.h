#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/buffer_pool.h"
#include "pacer/buffer.h"
#include "ps/messages/message.h"
#include "ps/messages/payload_consumer.h"
#include "ps/transport/transport.h"

namespace pacer {

class PathServices;
class PayloadPath;

// What a path keeps of one send beyond what every send has (see PayloadPath::Take).
struct PathData {
  virtual ~PathData() = default;
};

// One message on its way out of a UcxTransport, from SendBytes until its last event completed.
struct OutgoingSend {
  PathServices* transport = nullptr;  // that sends it
  int dst = 0;
  PayloadPath* path = nullptr;  // the path that carries it
  unsigned message_id = 0;      // the active message it goes as
  // The bytes the in-flight cap counts for it: its payload, or what goes instead (a location, a
  // description).
  int64_t bytes = 0;
  bool capped = true;  // counted by the in-flight cap (not a path's own control message)
  std::vector<uint8_t> header;
  std::vector<Buffer> fragments;  // their owners keep the payload alive until completion
  std::vector<ucp_dt_iov_t> iov;  // the fragments, as UCX takes them
  std::unique_ptr<PathData> path_data;
  // A send completes once every one of its events did (its active messages, a release).
  int events = 1;
  ucs_status_t status = UCS_OK;  // the first failure of its events
  Transport::SendCallback on_sent;
};

// What a path uses of its transport (UcxTransport). Everything runs on the thread that drives
// the UCX worker; the "Later" calls are for UCX's callbacks, which must not do the work.
class PathServices {
 public:
  virtual ~PathServices() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual double timeout_s() const = 0;
  virtual ucp_worker_h worker() = 0;
  virtual BufferPool& pool() = 0;

  // Posts one active message of `send`; its completion is one of the send's events.
  virtual void PostActiveMessage(OutgoingSend& send, unsigned id, const void* header,
                                 size_t header_length, const void* buffer, size_t count,
                                 ucp_datatype_t datatype, uint32_t flags) = 0;
  // From a callback: one of `send`'s events ended with `status`.
  virtual void CompleteLater(OutgoingSend* send, ucs_status_t status) = 0;
  // Queues a path's own message past the in-flight cap (a release makes room in the peer's cap:
  // capped releases could wait on each other forever).
  virtual void QueueUncapped(OutgoingSend* send) = 0;
  // From a callback: a received message, for the handler once the callback returned.
  virtual void DeliverLater(Message&& msg) = 0;
  // Outside callbacks: hands a received message to the handler now.
  virtual void Deliver(Message&& msg) = 0;
  // Where the receiver wants a large payload to land (a pull's destination), or null.
  virtual uint8_t* Place(const DecodedHeader& header) = 0;
  // A consumer of the message's values as they arrive (a server summing a push), or null.
  virtual std::shared_ptr<PayloadConsumer> ConsumerFor(const Message& msg) = 0;

  // Posts `send`'s header and fragments as one active message.
  void PostWhole(OutgoingSend& send, unsigned id, uint32_t flags);
  // A message's header, or all of it, decoded and validated; false (logged) when malformed.
  bool DecodeHeaderOrLog(const void* header, size_t length, DecodedHeader* decoded);
  bool DecodeOrLog(DecodedHeader&& header, const Buffer& payload, Message* msg);
  // A received payload of `bytes` where the receiver wants it, or in a pooled buffer; `out`
  // receives where to write it.
  Buffer Destination(const DecodedHeader& header, size_t bytes, uint8_t** out);
  // From a callback: a message whose payload UCX handed over as data (valid only during the
  // callback), copied out and delivered later.
  void DeliverCopy(DecodedHeader&& header, const void* data, size_t length);
};

// One way a payload travels between two ranks over UCX: a plain active message, UCX's own
// rendezvous, the sender's shared-memory ring, a description the receiver reads from the sender's
// memory, or pieces streamed over TCP. The transport offers each large send to its paths in order
// until one takes it; each path receives the active messages it sends.
class PayloadPath {
 public:
  virtual ~PayloadPath() = default;

  // The path's name, as SendsByPath gives it.
  virtual const char* name() const = 0;
  // The active messages this path sends and receives.
  virtual std::vector<unsigned> message_ids() const = 0;
  // Takes `send` if this path carries it, setting its message id and rewriting what goes on the
  // wire; false leaves it to the next path. On the sending thread, before the send is admitted.
  virtual bool Take(OutgoingSend& send) = 0;
  // Posts a send it took (its events' completions come back to the transport).
  virtual void Post(OutgoingSend& send) { services_.PostWhole(send, send.message_id, 0); }
  // UCX's callback for one of message_ids(). Malformed input is logged and dropped.
  virtual ucs_status_t Receive(unsigned id, const void* header, size_t header_length, void* data,
                               size_t length, const ucp_am_recv_param_t* param) = 0;
  // One of a send's events failed (before the send's completion is counted).
  virtual void Failed(OutgoingSend& send) {}

  // How many sends this path posted (of those the in-flight cap counts). Only the driver counts,
  // so the count needs no atomic add; others may read it.
  int64_t posted() const { return posted_.load(std::memory_order_relaxed); }
  void CountPosted() {
    posted_.store(posted_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

 protected:
  explicit PayloadPath(PathServices& services) : services_(services) {}
  PathServices& services_;

 private:
  std::atomic<int64_t> posted_{0};
};

}  // namespace pacer
