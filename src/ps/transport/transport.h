#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "ps/messages/message.h"
#include "ps/messages/payload_consumer.h"

namespace pacer {

// Moves messages between the ranks of one job. Implementations: UcxTransport (UCP active
// messages), MpiTransport (point-to-point), LocalTransport (ranks as threads of one process, for
// tests). A transport delivers each received message, decoded and validated, to the handler on its
// own progress thread; malformed input from a peer is logged and dropped, never delivered.
class Transport {
 public:
  using ReceiveHandler = std::function<void(Message&&)>;
  // Where a large incoming payload should land, decided from its header before it is fetched:
  // exactly payload_bytes() writable bytes that stay valid until the message is handled (a
  // pull's destination, so the data is not copied twice), or nullptr for a pooled buffer.
  using PayloadPlacer = std::function<uint8_t*(const DecodedHeader&)>;
  // Where a transport can hand a large payload over as it arrives (UcxTransport over TCP): a
  // consumer for the values of `msg` (its header: meta, keys and lengths, with consumed_bytes of
  // values to come), or null to receive them whole. Runs on the progress thread and must not send.
  using PayloadConsumerFactory = std::function<std::shared_ptr<PayloadConsumer>(const Message&)>;
  // Runs when the send completed (on the progress thread, or inside Send when it completes at
  // once); `error` is empty on success. It must not block.
  using SendCallback = std::function<void(const std::string& error)>;

  virtual ~Transport() = default;

  virtual std::string name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Installs the handler (and optionally a placer) and starts receiving. Called once, before any
  // Send; no message is received before the handler is in place. Both run on the progress thread.
  virtual void Start(ReceiveHandler handler, PayloadPlacer placer) = 0;
  // Installs the consumers' factory, before Start; transports that never stream ignore it.
  virtual void SetPayloadConsumers(PayloadConsumerFactory /*factory*/) {}
  // Sends asynchronously. The message's buffers stay referenced until the send completed; a
  // buffer without an owner must stay valid until `on_sent` runs. Throws Error for a bad rank.
  void Send(int dst, const Message& msg, SendCallback on_sent) {
    SendBytes(dst, EncodeHeader(msg), PayloadFragments(msg), std::move(on_sent));
  }
  // Sends an encoded header and a payload as they are. Send is built on it; fault-injection tests
  // use it to deliver malformed messages that Send could never produce.
  virtual void SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                         SendCallback on_sent) = 0;
  // Collective: completes this rank's sends, waits for every rank to get here, stops receiving.
  virtual void Stop() = 0;
  // Stops receiving at once, without completing sends or meeting the other ranks: the end of a
  // job that lost a rank, which would never arrive at Stop's meeting.
  virtual void Abandon() = 0;

  // Lets a thread that waits for a reply receive it itself: polls the transport on the calling
  // thread (running handlers there) until `done` returns true or `deadline` passes, spinning for
  // up to `spin` after the last activity before it blocks. Returns false, at once, where the
  // transport cannot (the caller then waits its own way). Must not be called from a handler.
  virtual bool PollUntil(const std::function<bool()>& /*done*/,
                         std::chrono::steady_clock::time_point /*deadline*/,
                         std::chrono::microseconds /*spin*/) {
    return false;
  }

  // `bytes` of memory this transport's same-host peers read in place when a payload of one
  // fragment lies in it (no copy), returned when the last copy of the pointer goes; null where
  // the transport has none.
  virtual std::shared_ptr<void> LendSharedMemory(size_t /*bytes*/) { return nullptr; }

 protected:
  // Throws Error naming the rank when `dst` is not a rank of this job.
  void CheckDestination(int dst) const;
};

}  // namespace pacer
