#include "ps/transport/local_transport.h"

#include <glog/logging.h>

#include <cstring>
#include <sstream>

#include "pacer/error.h"

namespace pacer {

LocalTransport::Fabric::Fabric(int size) {
  for (int r = 0; r < size; ++r) inboxes_.push_back(std::make_unique<Inbox>());
}

LocalTransport::LocalTransport(std::shared_ptr<Fabric> fabric, Bootstrap& bootstrap)
    : fabric_(std::move(fabric)), bootstrap_(bootstrap), rank_(bootstrap.rank()) {}

LocalTransport::~LocalTransport() { Close(); }

void LocalTransport::Start(ReceiveHandler handler, PayloadPlacer /*placer: payloads are copied*/) {
  handler_ = std::move(handler);
  delivery_thread_ = std::thread([this] { DeliveryLoop(); });
}

void LocalTransport::SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                               SendCallback on_sent) {
  CheckDestination(dst);
  size_t total = 0;
  for (const Buffer& f : payload) total += f.size();
  uint8_t* out = nullptr;
  Fabric::Envelope envelope{std::move(header), Buffer::Allocate(total, &out)};
  for (const Buffer& f : payload) {
    if (f.size() > 0) std::memcpy(out, f.data(), f.size());
    out += f.size();
  }
  Fabric::Inbox& inbox = *fabric_->inboxes_[dst];
  {
    std::lock_guard<std::mutex> lock(inbox.mu);
    inbox.queue.push_back(std::move(envelope));
  }
  inbox.ready.notify_one();
  if (on_sent) on_sent("");
}

void LocalTransport::DeliveryLoop() {
  Fabric::Inbox& inbox = *fabric_->inboxes_[rank_];
  for (;;) {
    Fabric::Envelope envelope;
    {
      std::unique_lock<std::mutex> lock(inbox.mu);
      inbox.ready.wait(lock, [&] { return inbox.closed || !inbox.queue.empty(); });
      if (inbox.queue.empty()) return;
      envelope = std::move(inbox.queue.front());
      inbox.queue.pop_front();
    }
    DecodedHeader decoded;
    std::string error;
    Message msg;
    if (!DecodeHeader(envelope.header.data(), envelope.header.size(), size(), &decoded, &error) ||
        !DecodePayload(std::move(decoded), envelope.payload, &msg, &error)) {
      LOG(ERROR) << "rank " << rank_ << " rejected a message: " << error;
      continue;
    }
    handler_(std::move(msg));
  }
}

namespace {

// How long a rank waits in Stop for the others: the threads of one test process, which all reach
// it unless one of them failed (the wait then ends the test instead of hanging it).
constexpr auto kStopDeadline = std::chrono::minutes(2);

}  // namespace

void LocalTransport::Stop() {
  // Collective, like the real transports: every rank's sends are enqueued before anyone stops.
  bootstrap_.Barrier(kStopDeadline);
  Close();
}

void LocalTransport::Abandon() { Close(); }

void LocalTransport::Close() {
  Fabric::Inbox& inbox = *fabric_->inboxes_[rank_];
  {
    std::lock_guard<std::mutex> lock(inbox.mu);
    inbox.closed = true;
  }
  inbox.ready.notify_all();
  if (delivery_thread_.joinable()) delivery_thread_.join();
}

}  // namespace pacer
