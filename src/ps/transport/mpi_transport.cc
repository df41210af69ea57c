#include "ps/transport/mpi_transport.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <sstream>

#include "common/spin_policy.h"
#include "pacer/error.h"

namespace pacer {
namespace {

constexpr int kFrameTag = 1;
constexpr int kPayloadTag = 2;

}  // namespace

struct MpiTransport::SendContext {
  int dst;
  int64_t bytes;
  std::vector<uint8_t> frame;     // uint64 payload length, then the wire header
  std::vector<Buffer> fragments;  // their owners keep the payload alive until completion
  SendCallback on_sent;
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

struct MpiTransport::PendingReceive {
  int source;
  std::vector<uint8_t> frame;
  Buffer payload;
  MPI_Request request = MPI_REQUEST_NULL;
};

MpiTransport::MpiTransport(MPI_Comm comm, const TransportTuning& tuning, double timeout_s)
    : comm_(comm), timeout_s_(timeout_s), limiter_(tuning.max_inflight_bytes) {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    throw Error("MPI transport needs MPI_THREAD_MULTIPLE; MPI was initialized with level " +
                std::to_string(provided));
  }
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  spin_us_ = std::max(0, tuning.spin_us);
}

MpiTransport::~MpiTransport() {
  progress_thread_.Halt(nullptr);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

void MpiTransport::Start(ReceiveHandler handler, PayloadPlacer placer) {
  handler_ = std::move(handler);
  placer_ = std::move(placer);
  progress_thread_.Start([this] { ProgressLoop(); });
}

void MpiTransport::SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                             SendCallback on_sent) {
  CheckDestination(dst);
  auto ctx = std::make_unique<SendContext>();
  ctx->dst = dst;
  ctx->bytes = 0;
  for (const Buffer& f : payload) {
    if (f.size() > static_cast<size_t>(INT_MAX)) {
      throw Error("MPI transport: a payload fragment of " + std::to_string(f.size()) +
                  " bytes exceeds INT_MAX");
    }
    ctx->bytes += static_cast<int64_t>(f.size());
  }
  uint64_t length = static_cast<uint64_t>(ctx->bytes);
  ctx->frame.resize(sizeof(length) + header.size());
  std::memcpy(ctx->frame.data(), &length, sizeof(length));
  std::memcpy(ctx->frame.data() + sizeof(length), header.data(), header.size());
  ctx->fragments = std::move(payload);
  ctx->on_sent = std::move(on_sent);
  const int64_t bytes = ctx->bytes;
  std::lock_guard<std::mutex> order(order_mu_);
  if (auto admitted = limiter_.Admit(dst, bytes, ctx.release())) Post(*admitted);
}

void MpiTransport::Post(SendContext* raw) {
  std::unique_ptr<SendContext> ctx(raw);
  std::lock_guard<std::mutex> lock(send_mu_);
  MPI_Isend(ctx->frame.data(), static_cast<int>(ctx->frame.size()), MPI_BYTE, ctx->dst, kFrameTag,
            comm_, &ctx->requests[0]);
  if (ctx->fragments.size() == 1) {
    MPI_Isend(ctx->fragments[0].data(), static_cast<int>(ctx->fragments[0].size()), MPI_BYTE,
              ctx->dst, kPayloadTag, comm_, &ctx->requests[1]);
  } else if (ctx->fragments.size() > 1) {
    std::vector<int> lengths;
    std::vector<MPI_Aint> addresses;
    for (const Buffer& f : ctx->fragments) {
      MPI_Aint address;
      MPI_Get_address(f.data(), &address);
      lengths.push_back(static_cast<int>(f.size()));
      addresses.push_back(address);
    }
    MPI_Datatype type;
    MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), addresses.data(),
                             MPI_BYTE, &type);
    MPI_Type_commit(&type);
    MPI_Isend(MPI_BOTTOM, 1, type, ctx->dst, kPayloadTag, comm_, &ctx->requests[1]);
    MPI_Type_free(&type);
  }
  sends_.push_back(std::move(ctx));
}

bool MpiTransport::TestSends() {
  std::vector<std::unique_ptr<SendContext>> done;
  {
    std::lock_guard<std::mutex> lock(send_mu_);
    for (size_t i = 0; i < sends_.size();) {
      int flag = 0;
      MPI_Testall(2, sends_[i]->requests, &flag, MPI_STATUSES_IGNORE);
      if (flag) {
        done.push_back(std::move(sends_[i]));
        sends_[i] = std::move(sends_.back());
        sends_.pop_back();
      } else {
        ++i;
      }
    }
  }
  for (auto& ctx : done) {
    {
      std::lock_guard<std::mutex> order(order_mu_);
      for (SendContext* ready : limiter_.Complete(ctx->dst, ctx->bytes)) Post(ready);
    }
    if (ctx->on_sent) ctx->on_sent("");
  }
  return !done.empty();
}

bool MpiTransport::ProbeFrames() {
  bool any = false;
  for (;;) {
    int flag = 0;
    MPI_Message message;
    MPI_Status status;
    MPI_Improbe(MPI_ANY_SOURCE, kFrameTag, comm_, &flag, &message, &status);
    if (!flag) return any;
    any = true;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    auto receive = std::make_unique<PendingReceive>();
    receive->source = status.MPI_SOURCE;
    receive->frame.resize(count);
    MPI_Mrecv(receive->frame.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    uint64_t length = 0;
    if (receive->frame.size() < sizeof(length)) {
      LOG(ERROR) << "rank " << rank_ << " rejected a frame of " << count << " bytes from rank "
                 << receive->source;
      continue;
    }
    std::memcpy(&length, receive->frame.data(), sizeof(length));
    if (length > 0) {
      uint8_t* out = nullptr;
      DecodedHeader header;
      std::string ignored;  // a bad header is reported when the message is delivered
      if (placer_ &&
          DecodeHeader(receive->frame.data() + sizeof(length),
                       receive->frame.size() - sizeof(length), size_, &header, &ignored) &&
          header.payload_bytes() == length) {
        out = placer_(header);
      }
      if (out != nullptr) {
        receive->payload = Buffer(out, length);
      } else {
        receive->payload = pool_.Allocate(length, &out);
      }
      MPI_Irecv(out, static_cast<int>(length), MPI_BYTE, receive->source, kPayloadTag, comm_,
                &receive->request);
    }
    receives_.push_back(std::move(receive));
  }
}

bool MpiTransport::TestReceives() {
  bool any = false;
  // Deliver in arrival order per source: stop at the first incomplete receive of each source.
  std::vector<bool> blocked(size_, false);
  for (size_t i = 0; i < receives_.size();) {
    PendingReceive& r = *receives_[i];
    int flag = 1;
    if (!blocked[r.source] && r.request != MPI_REQUEST_NULL) {
      MPI_Test(&r.request, &flag, MPI_STATUS_IGNORE);
    }
    if (blocked[r.source] || !flag) {
      blocked[r.source] = true;
      ++i;
      continue;
    }
    std::unique_ptr<PendingReceive> done = std::move(receives_[i]);
    receives_.erase(receives_.begin() + static_cast<std::ptrdiff_t>(i));
    Deliver(*done);
    any = true;
  }
  return any;
}

void MpiTransport::Deliver(PendingReceive& receive) {
  const uint8_t* header = receive.frame.data() + sizeof(uint64_t);
  size_t header_size = receive.frame.size() - sizeof(uint64_t);
  DecodedHeader decoded;
  std::string error;
  Message msg;
  if (!DecodeHeader(header, header_size, size_, &decoded, &error) ||
      !DecodePayload(std::move(decoded), receive.payload, &msg, &error)) {
    LOG(ERROR) << "rank " << rank_ << " rejected a message from rank " << receive.source << ": "
               << error;
    return;
  }
  handler_(std::move(msg));
}

void MpiTransport::ProgressLoop() {
  IdlePoller poller(std::chrono::microseconds{spin_us_});
  auto backoff = std::chrono::microseconds(5);
  while (!progress_thread_.stopping()) {
    bool active = ProbeFrames();
    active |= TestReceives();
    active |= TestSends();
    if (active) backoff = std::chrono::microseconds(5);
    if (poller.PollAgain(active)) continue;
    // MPI has no event fd to block on: sleep, a little longer each idle pass.
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::microseconds(200));
  }
}

void MpiTransport::Stop() {
  progress_thread_.Stop(
      rank_, timeout_s_, [this](std::chrono::milliseconds t) { return limiter_.WaitIdle(t); },
      [this] { MPI_Barrier(comm_); }, nullptr);
}

void MpiTransport::Abandon() { progress_thread_.Halt(nullptr); }

}  // namespace pacer
