#include "ps/transport/ucx_transport.h"

#include <glog/logging.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "pacer/error.h"
#include "ps/spin_policy.h"
#include "ps/split.h"
#include "ps/str_cat.h"
#include "ps/transport/segment_pieces.h"

namespace pacer {
namespace {

// How often a progress thread standing aside for a waiting thread looks whether it still waits.
constexpr auto kAsideCheck = std::chrono::microseconds(500);

// The transport the calling thread is driving, if any: its handlers' sends are queued for the
// pass under way, and a handler cannot start a nested pass.
thread_local const UcxTransport* driving = nullptr;

class DrivingScope {
 public:
  explicit DrivingScope(const UcxTransport* transport) { driving = transport; }
  ~DrivingScope() { driving = nullptr; }
};

// Counts the calling thread in `count` for the scope's life; counts nothing where `count` is null.
class CountedScope {
 public:
  explicit CountedScope(std::atomic<int>* count) : count_(count) {
    if (count_ != nullptr) count_->fetch_add(1);
  }
  ~CountedScope() {
    if (count_ != nullptr) count_->fetch_sub(1);
  }
  CountedScope(const CountedScope&) = delete;
  CountedScope& operator=(const CountedScope&) = delete;

 private:
  std::atomic<int>* count_;
};

void Check(ucs_status_t status, const char* what) {
  if (status != UCS_OK) {
    std::ostringstream s;
    s << "UCX: " << what << " failed: " << ucs_status_string(status);
    throw Error(s.str());
  }
}

bool AllRanksOnThisHost(MPI_Comm comm) {
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int local_size = 0, size = 0;
  MPI_Comm_size(local, &local_size);
  MPI_Comm_size(comm, &size);
  MPI_Comm_free(&local);
  return local_size == size;
}

}  // namespace

bool UcxTlsAllowsSharedMemory(const char* tls) {
  if (tls == nullptr) return true;
  std::string list = tls;
  const bool excluding = !list.empty() && list[0] == '^';
  if (excluding) list.erase(0, 1);
  // UCX's names for its shared-memory transports and the aliases that include them.
  static const char* const kSharedMemory[] = {"all", "sm", "shm", "mm", "posix", "sysv", "xpmem"};
  bool named = false;
  for (const std::string& item : Split(list, ',')) {
    for (const char* name : kSharedMemory) {
      if (item == name && !(excluding && item == "all")) named = true;
    }
  }
  return excluding ? !named : named;
}

struct UcxTransport::RndvReceive {
  DecodedHeader header;
  void* descriptor;
  size_t length;
  Buffer payload;
  UcxTransport* transport;
};

UcxTransport::UcxTransport(MPI_Comm comm, const Config& config, Rendezvous rendezvous)
    : comm_(comm),
      timeout_s_(config.timeout_s),
      rndv_threshold_(static_cast<size_t>(config.rndv_threshold)),
      describes_(rendezvous == Rendezvous::kReceiverReads),
      limiter_(config.max_inflight_bytes) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  spin_us_ = std::max(0, config.spin_us);

  ucp_config_t* ucp_config = nullptr;
  Check(ucp_config_read(nullptr, nullptr, &ucp_config), "ucp_config_read");
  if (std::getenv("UCX_RNDV_SCHEME") == nullptr) {
    const char* scheme = rendezvous == Rendezvous::kSenderWrites ? "put_zcopy" : "get_zcopy";
    Check(ucp_config_modify(ucp_config, "RNDV_SCHEME", scheme), "ucp_config_modify");
  }
  // Where every rank shares this host, a second rendezvous rail can only be TCP over loopback:
  // UCX adds one, and then polls its socket on every progress call (a system call; 8.5 against
  // 14 us per 4 KiB round trip).
  if (std::getenv("UCX_MAX_RNDV_RAILS") == nullptr && AllRanksOnThisHost(comm_)) {
    Check(ucp_config_modify(ucp_config, "MAX_RNDV_RAILS", "1"), "ucp_config_modify");
  }
  // Over TCP a rendezvous payload comes as fragments of one receive segment each, every one a
  // trip through the progress loop (epoll, recv, a copy out of the segment): UCX's 64 KiB made a
  // 1 MiB push 16 of them. 512 KiB segments (only TCP has this setting), 1 MiB pushes, window 8:
  // 4.3-5.1 against 3.2-3.6 GB/s.
  if (std::getenv("UCX_TCP_RX_SEG_SIZE") == nullptr) {
    Check(ucp_config_modify(ucp_config, "RX_SEG_SIZE", "512K"), "ucp_config_modify");
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  ucs_status_t status = ucp_init(&params, ucp_config, &context_);
  ucp_config_release(ucp_config);
  Check(status, "ucp_init");

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  Check(ucp_worker_create(context_, &worker_params, &worker_), "ucp_worker_create");
  Check(ucp_worker_get_efd(worker_, &event_fd_), "ucp_worker_get_efd");

  const bool shared_memory = UcxTlsAllowsSharedMemory(std::getenv("UCX_TLS"));
  const bool ring =
      rendezvous == Rendezvous::kSenderWrites && config.shm_ring_bytes > 0 && shared_memory;
  if (rendezvous == Rendezvous::kSenderWrites && config.stream_piece_bytes != 0 && !shared_memory) {
    // NextPieceLength makes whole values of it.
    stream_piece_bytes_ = config.stream_piece_bytes > 0
                              ? static_cast<size_t>(config.stream_piece_bytes)
                              : StreamPieceTarget(KernelTcpCongestionControl());
  }
  shared_memory_ = std::make_unique<SharedMemoryRoutes>(
      rank_, size_, ring ? static_cast<size_t>(config.shm_ring_bytes) : 0,
      shared_memory ? config.read_threads : 0);
}

UcxTransport::~UcxTransport() {
  if (started_ && !stopped_) {
    stopping_ = true;
    ucp_worker_signal(worker_);
    if (progress_thread_.joinable()) progress_thread_.join();
    CloseEndpoints();
  }
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

void UcxTransport::Start(ReceiveHandler handler, PayloadPlacer placer) {
  handler_ = std::move(handler);
  placer_ = std::move(placer);
  SetHandler(kActiveMessageId, &UcxTransport::OnActiveMessage);
  SetHandler(kRingMessageId, &UcxTransport::OnSharedMemoryMessage);
  SetHandler(kDescribedMessageId, &UcxTransport::OnDescribedMessage);
  SetHandler(kReleaseMessageId, &UcxTransport::OnRelease);
  SetHandler(kStreamHeaderId, &UcxTransport::OnStreamHeader);
  SetHandler(kStreamPieceId, &UcxTransport::OnStreamPiece);
  shared_memory_->Connect(comm_);

  // The handlers are installed before any peer learns our address, so no message can arrive early.
  ucp_address_t* address = nullptr;
  size_t address_length = 0;
  Check(ucp_worker_get_address(worker_, &address, &address_length), "ucp_worker_get_address");
  int my_length = static_cast<int>(address_length);
  std::vector<int> lengths(size_), offsets(size_);
  MPI_Allgather(&my_length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<uint8_t> addresses(total);
  MPI_Allgatherv(address, my_length, MPI_BYTE, addresses.data(), lengths.data(), offsets.data(),
                 MPI_BYTE, comm_);
  ucp_worker_release_address(worker_, address);

  endpoints_.assign(size_, nullptr);
  for (int r = 0; r < size_; ++r) {
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = reinterpret_cast<const ucp_address_t*>(addresses.data() + offsets[r]);
    Check(ucp_ep_create(worker_, &ep, &endpoints_[r]), "ucp_ep_create");
  }

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = event_fd_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, event_fd_, &ev) != 0) {
    throw Error("UCX: epoll_ctl on the worker's event fd failed");
  }
  started_ = true;
  progress_thread_ = std::thread([this] { ProgressLoop(); });
}

void UcxTransport::SetHandler(unsigned id, ucp_am_recv_callback_t callback) {
  ucp_am_handler_param_t am{};
  am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                  UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  am.id = id;
  am.cb = callback;
  am.arg = this;
  am.flags = UCP_AM_FLAG_WHOLE_MSG;
  Check(ucp_worker_set_am_recv_handler(worker_, &am), "ucp_worker_set_am_recv_handler");
}

void UcxTransport::SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                             SendCallback on_sent) {
  CheckDestination(dst);
  auto* ctx = new SendContext();
  ctx->dst = dst;
  ctx->transport = this;
  ctx->header = std::move(header);
  ctx->fragments = std::move(payload);
  ctx->bytes = 0;
  for (const Buffer& f : ctx->fragments) ctx->bytes += static_cast<int64_t>(f.size());
  if (static_cast<size_t>(ctx->bytes) >= rndv_threshold_) RouteLargePayload(ctx);
  for (const Buffer& f : ctx->fragments) {
    ctx->iov.push_back(ucp_dt_iov_t{const_cast<uint8_t*>(f.data()), f.size()});
  }
  ctx->on_sent = std::move(on_sent);
  if (!limiter_.Admit(dst, ctx->bytes, ctx)) return;  // posted later, when completions make room
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queued_sends_.push_back(ctx);
  }
  if (driving != this && started_ && !stopping_.load()) {
    CountedScope driver(stream_piece_bytes_ > 0 ? &drivers_ : nullptr);  // see the class comment
    std::unique_lock<std::mutex> lock(progress_mu_, std::try_to_lock);
    if (lock.owns_lock()) {
      DrivingScope scope(this);
      PostQueuedSends();
      return;
    }
  }
  // Paired with the progress thread's store to sleeping_ and its re-check of the queue: either it
  // sees the send, or we see it sleeping and wake it.
  if (sleeping_.load()) ucp_worker_signal(worker_);
}

void UcxTransport::RouteLargePayload(SendContext* ctx) {
  if (const std::optional<SharedMemoryLocation> where =
          shared_memory_->Write(ctx->dst, ctx->fragments, static_cast<size_t>(ctx->bytes))) {
    ctx->message_id = kRingMessageId;
    ctx->location = *where;
    ctx->fragments = {Buffer(&ctx->location, sizeof ctx->location)};
    ctx->bytes = sizeof ctx->location;
  } else if (describes_ && shared_memory_->ReadsOurs(ctx->dst)) {
    Describe(ctx);
  } else if (stream_piece_bytes_ > 0) {
    CutIntoPieces(ctx);
  } else if (ctx->fragments.size() > 1) {
    // UCX 1.13 has no zero-copy rendezvous for iov data: it would pack it into many small
    // fragments. One copy into a contiguous buffer here is much cheaper.
    uint8_t* out = nullptr;
    Buffer joined = pool_.Allocate(static_cast<size_t>(ctx->bytes), &out);
    for (const Buffer& f : ctx->fragments) {
      if (f.size() > 0) std::memcpy(out, f.data(), f.size());
      out += f.size();
    }
    ctx->fragments = {joined};
  }
}

bool UcxTransport::PostQueuedSends() {
  bool posted = false;
  for (;;) {  // completions may queue more sends
    std::vector<SendContext*> to_post;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      to_post.swap(queued_sends_);
    }
    if (to_post.empty()) return posted;
    for (SendContext* ctx : to_post) Post(ctx);
    posted = true;
  }
}

bool UcxTransport::HasQueuedSends() {
  std::lock_guard<std::mutex> lock(queue_mu_);
  return !queued_sends_.empty();
}

void UcxTransport::Post(SendContext* ctx) {
  if (ctx->message_id == kStreamHeaderId) {
    PostStream(ctx);
    return;
  }
  // Before the send: the release may be handled before the send's own completion.
  if (ctx->token != 0) awaiting_release_[ctx->token] = ctx;
  const bool large = static_cast<size_t>(ctx->bytes) >= rndv_threshold_;
  const uint32_t flags = ctx->message_id == kActiveMessageId && large ? UCP_AM_SEND_FLAG_RNDV : 0;
  const void* buffer = nullptr;
  size_t count = 0;
  ucp_datatype_t datatype = ucp_dt_make_contig(1);
  if (ctx->iov.size() == 1) {
    buffer = ctx->iov[0].buffer;
    count = ctx->iov[0].length;
  } else if (ctx->iov.size() > 1) {
    buffer = ctx->iov.data();
    count = ctx->iov.size();
    datatype = ucp_dt_make_iov();
  }
  PostActiveMessage(ctx, ctx->message_id, ctx->header.data(), ctx->header.size(), buffer, count,
                    datatype, flags);
}

void UcxTransport::PostActiveMessage(SendContext* ctx, unsigned id, const void* header,
                                     size_t header_length, const void* buffer, size_t count,
                                     ucp_datatype_t datatype, uint32_t flags) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                       UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &UcxTransport::OnSendDone;
  param.user_data = ctx;
  param.datatype = datatype;
  param.flags = flags;
  ucs_status_ptr_t request =
      ucp_am_send_nbx(endpoints_[ctx->dst], id, header, header_length, buffer, count, &param);
  if (request == nullptr) {
    FinishSend(ctx, UCS_OK);
  } else if (UCS_PTR_IS_ERR(request)) {
    FinishSend(ctx, UCS_PTR_STATUS(request));
  }
}

void UcxTransport::OnSendDone(void* request, ucs_status_t status, void* user_data) {
  auto* ctx = static_cast<SendContext*>(user_data);
  UcxTransport* self = ctx->transport;
  ucp_request_free(request);
  self->sends_done_.emplace_back(ctx, status);
}

void UcxTransport::FinishSend(SendContext* ctx, ucs_status_t status) {
  if (status != UCS_OK) {
    if (ctx->status == UCS_OK) ctx->status = status;
    // A described payload whose description failed will not be released.
    if (ctx->token != 0 && awaiting_release_.erase(ctx->token) > 0) --ctx->events;
  }
  if (--ctx->events > 0) return;
  status = ctx->status;
  std::string error;
  if (status != UCS_OK) {
    error = StrCat("UCX send of ", ctx->bytes, " bytes to rank ", ctx->dst,
                   " failed: ", ucs_status_string(status));
    LOG(ERROR) << error;
  }
  std::unique_ptr<SendContext> owned(ctx);
  if (ctx->message_id == kReleaseMessageId) return;  // not counted by limiter_
  for (SendContext* ready : limiter_.Complete(ctx->dst, ctx->bytes)) Post(ready);
  if (owned->on_sent) owned->on_sent(error);
}

ucs_status_t UcxTransport::OnActiveMessage(void* arg, const void* header, size_t header_length,
                                           void* data, size_t length,
                                           const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxTransport*>(arg);
  DecodedHeader decoded;
  if (!self->DecodeHeaderOrLog(header, header_length, &decoded)) return UCS_OK;
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    if (length != decoded.payload_bytes()) {
      LOG(ERROR) << "rank " << self->rank_ << " rejected a message from rank "
                 << decoded.meta.sender() << ": payload of " << length << " bytes, header declares "
                 << decoded.payload_bytes();
      return UCS_OK;
    }
    self->rndv_to_start_.push_back(
        new RndvReceive{std::move(decoded), data, length, Buffer(), self});
    return UCS_INPROGRESS;
  }
  uint8_t* copy = nullptr;
  Buffer payload = self->pool_.Allocate(length, &copy);
  if (length > 0) std::memcpy(copy, data, length);
  Message msg;
  if (self->Decode(std::move(decoded), payload, &msg)) self->received_.push_back(std::move(msg));
  return UCS_OK;
}

ucs_status_t UcxTransport::OnSharedMemoryMessage(void* arg, const void* header,
                                                 size_t header_length, void* data, size_t length,
                                                 const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxTransport*>(arg);
  DecodedHeader decoded;
  std::string error;
  Buffer payload;
  if (!DecodeHeader(header, header_length, self->size_, &decoded, &error)) {
    // `error` says why
  } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    error = StrCat("rank ", decoded.meta.sender(), " sent a shared-memory location of ", length,
                   " bytes by rendezvous");
  } else {
    self->shared_memory_->Read(decoded.meta.sender(), data, length, decoded.payload_bytes(),
                               &payload, &error);
  }
  if (!error.empty()) {
    LOG(ERROR) << "rank " << self->rank_ << " rejected a message: " << error;
    return UCS_OK;
  }
  if (uint8_t* out = self->placer_ ? self->placer_(decoded) : nullptr) {
    std::memcpy(out, payload.data(), payload.size());
    payload = Buffer(out, payload.size());
  }
  Message msg;
  if (self->Decode(std::move(decoded), payload, &msg)) self->received_.push_back(std::move(msg));
  return UCS_OK;
}

bool UcxTransport::DecodeHeaderOrLog(const void* header, size_t length, DecodedHeader* decoded) {
  std::string error;
  if (DecodeHeader(header, length, size_, decoded, &error)) return true;
  LOG(ERROR) << "rank " << rank_ << " rejected a message: " << error;
  return false;
}

bool UcxTransport::Decode(DecodedHeader&& header, const Buffer& payload, Message* msg) {
  std::string error;
  if (DecodePayload(std::move(header), payload, msg, &error)) return true;
  LOG(ERROR) << "rank " << rank_ << " rejected a message: " << error;
  return false;
}

void UcxTransport::StartRndvReceive(RndvReceive* rndv) {
  uint8_t* out = placer_ ? placer_(rndv->header) : nullptr;
  if (out != nullptr) {
    rndv->payload = Buffer(out, rndv->length);
  } else {
    rndv->payload = pool_.Allocate(rndv->length, &out);
  }
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.cb.recv_am = &UcxTransport::OnRndvDone;
  param.user_data = rndv;
  param.datatype = ucp_dt_make_contig(1);
  ucs_status_ptr_t request =
      ucp_am_recv_data_nbx(worker_, rndv->descriptor, out, rndv->length, &param);
  if (request == nullptr) {
    FinishRndvReceive(rndv, UCS_OK);
  } else if (UCS_PTR_IS_ERR(request)) {
    FinishRndvReceive(rndv, UCS_PTR_STATUS(request));
  }
}

void UcxTransport::OnRndvDone(void* request, ucs_status_t status, size_t length, void* user_data) {
  auto* rndv = static_cast<RndvReceive*>(user_data);
  UcxTransport* self = rndv->transport;
  ucp_request_free(request);
  self->rndv_done_.emplace_back(rndv, status);
}

void UcxTransport::FinishRndvReceive(RndvReceive* rndv, ucs_status_t status) {
  std::unique_ptr<RndvReceive> owned(rndv);
  if (status != UCS_OK) {
    LOG(ERROR) << "rank " << rank_ << ": rendezvous receive from rank "
               << rndv->header.meta.sender() << " failed: " << ucs_status_string(status);
    return;
  }
  Message msg;
  if (Decode(std::move(rndv->header), rndv->payload, &msg)) handler_(std::move(msg));
}

bool UcxTransport::Drive() {
  DrivingScope scope(this);
  bool active = ucp_worker_progress(worker_) != 0;
  active = RunDeferredWork() || active;
  // Only on a pass that found nothing: a stream missing its pieces leaves the driver idle, and a
  // busy pass need not read the clock.
  if (!active && !streams_.empty()) DropStaleStreams();
  return active;
}

bool UcxTransport::RunDeferredWork() {
  const bool posted = PostQueuedSends();
  std::vector<Message> received;
  std::vector<RndvReceive*> to_start;
  std::vector<std::pair<RndvReceive*, ucs_status_t>> done;
  std::vector<std::pair<SendContext*, ucs_status_t>> sends_done;
  received.swap(received_);
  to_start.swap(rndv_to_start_);
  done.swap(rndv_done_);
  sends_done.swap(sends_done_);
  for (auto& [ctx, status] : sends_done) FinishSend(ctx, status);
  for (RndvReceive* rndv : to_start) StartRndvReceive(rndv);
  for (auto& [rndv, status] : done) FinishRndvReceive(rndv, status);
  for (Message& msg : received) handler_(std::move(msg));
  return posted || !(received.empty() && to_start.empty() && done.empty() && sends_done.empty());
}

void UcxTransport::ProgressLoop() {
  IdlePoller poller(std::chrono::microseconds{spin_us_});
  while (!stopping_.load(std::memory_order_relaxed)) {
    if (drivers_.load() > 0 && !HasQueuedSends()) {
      // A caller drives. Callers come and go with every request, so they do not wake us when
      // they leave (a wake-up per request cost more than the hop it saves); we look again soon
      // instead, in case messages arrive while no one drives. A send queued while a poster was
      // counted, but did not get to drive, is ours to post.
      std::this_thread::sleep_for(kAsideCheck);
      continue;
    }
    bool active;
    {
      std::lock_guard<std::mutex> lock(progress_mu_);
      active = Drive();
    }
    if (poller.PollAgain(active)) continue;
    std::unique_lock<std::mutex> lock(progress_mu_);
    sleeping_.store(true);
    if (drivers_.load() > 0 || HasQueuedSends() || ucp_worker_arm(worker_) == UCS_ERR_BUSY) {
      sleeping_.store(false);
      continue;
    }
    lock.unlock();
    epoll_event ev;
    epoll_wait(epoll_fd_, &ev, 1, /*timeout_ms=*/100);
    sleeping_.store(false);
  }
}

bool UcxTransport::PollUntil(const std::function<bool()>& done,
                             std::chrono::steady_clock::time_point deadline,
                             std::chrono::microseconds spin) {
  if (driving == this || !started_ || stopping_.load()) return false;
  CountedScope driver(&drivers_);
  IdlePoller poller(spin);
  while (!done() && !stopping_.load() && std::chrono::steady_clock::now() < deadline) {
    std::unique_lock<std::mutex> lock(progress_mu_);
    const bool active = Drive();
    lock.unlock();
    if (poller.PollAgain(active)) continue;
    lock.lock();
    const bool busy = done() || HasQueuedSends() || ucp_worker_arm(worker_) == UCS_ERR_BUSY;
    lock.unlock();
    if (busy) continue;
    // At most 1 ms: another thread may finish what we wait for without a message arriving.
    epoll_event ev;
    epoll_wait(epoll_fd_, &ev, 1, /*timeout_ms=*/1);
  }
  return true;
}

void UcxTransport::CloseEndpoints() {
  std::lock_guard<std::mutex> lock(progress_mu_);
  std::vector<ucs_status_ptr_t> requests;
  for (ucp_ep_h ep : endpoints_) {
    if (ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &param);
    if (r != nullptr && !UCS_PTR_IS_ERR(r)) requests.push_back(r);
  }
  for (ucs_status_ptr_t r : requests) {
    while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(worker_);
    ucp_request_free(r);
  }
  endpoints_.clear();
}

void UcxTransport::Stop() {
  if (!started_ || stopped_) return;
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000));
  if (!limiter_.WaitIdle(timeout)) {
    LOG(WARNING) << "rank " << rank_ << ": sends still in flight after " << timeout_s_
                 << " s; stopping anyway";
  }
  // Peers may still be fetching rendezvous data from us or sending to us: keep progressing until
  // every rank has completed its own sends.
  MPI_Barrier(comm_);
  stopping_ = true;
  ucp_worker_signal(worker_);
  progress_thread_.join();
  CloseEndpoints();
  stopped_ = true;
}

}  // namespace pacer
