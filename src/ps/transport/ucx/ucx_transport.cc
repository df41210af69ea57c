#include "ps/transport/ucx/ucx_transport.h"

#include <glog/logging.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/spin_policy.h"
#include "common/split.h"
#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/transport/ucx/described_path.h"
#include "ps/transport/ucx/eager_path.h"
#include "ps/transport/ucx/rendezvous_path.h"
#include "ps/transport/ucx/ring_path.h"
#include "ps/transport/ucx/segment_pieces.h"
#include "ps/transport/ucx/streamed_path.h"

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

std::chrono::milliseconds Milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

UcxWorker::Settings WorkerSettings(const UcxTransport::Options& options) {
  UcxWorker::Settings settings;
  settings.sender_writes = options.rendezvous == UcxTransport::Rendezvous::kSenderWrites;
  settings.tls = options.tls;
  settings.net_devices = options.net_devices;
  return settings;
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

UcxTransport::UcxTransport(Bootstrap& bootstrap, const Options& options)
    : bootstrap_(bootstrap),
      rank_(bootstrap.rank()),
      size_(bootstrap.size()),
      spin_us_(std::max(0, options.tuning.spin_us)),
      timeout_s_(options.timeout_s),
      rndv_threshold_(static_cast<size_t>(options.tuning.rndv_threshold)),
      worker_(WorkerSettings(options)),
      limiter_(options.tuning.max_inflight_bytes) {
  const bool shared_memory =
      UcxTlsAllowsSharedMemory(!options.tls.empty() ? options.tls.c_str() : std::getenv("UCX_TLS"));
  AddPaths(options, shared_memory);
}

void UcxTransport::AddPaths(const Options& options, bool shared_memory) {
  const TransportTuning& tuning = options.tuning;
  const bool writes = options.rendezvous == Rendezvous::kSenderWrites;
  const bool ring = writes && tuning.shm_ring_bytes > 0 && shared_memory;
  shared_memory_ = std::make_unique<SharedMemoryRoutes>(
      rank_, size_, ring ? static_cast<size_t>(tuning.shm_ring_bytes) : 0,
      shared_memory ? tuning.read_threads : 0);
  PathServices& services = *this;
  auto rendezvous = std::make_unique<RendezvousPath>(services);
  rendezvous_ = rendezvous.get();
  auto eager = std::make_unique<EagerPath>(services, *rendezvous);
  eager_ = eager.get();
  paths_.push_back(std::move(eager));
  // Every path receives (a peer may send by any), but only some send from this rank.
  auto add_large = [&](std::unique_ptr<PayloadPath> path, bool sends) {
    if (sends) large_paths_.push_back(path.get());
    paths_.push_back(std::move(path));
  };
  add_large(std::make_unique<RingPath>(services, *shared_memory_), ring);
  add_large(std::make_unique<DescribedPath>(services, *shared_memory_), !writes);
  size_t piece_bytes = 0;
  if (writes && tuning.stream_piece_bytes != 0 && !shared_memory) {
    piece_bytes = tuning.stream_piece_bytes > 0 ? static_cast<size_t>(tuning.stream_piece_bytes)
                                                : StreamPieceTarget(KernelTcpCongestionControl());
  }
  streams_ = piece_bytes > 0;
  auto streamed = std::make_unique<StreamedPath>(services, std::max<size_t>(piece_bytes, 1));
  streamed_ = streamed.get();
  add_large(std::move(streamed), streams_);
  add_large(std::move(rendezvous), true);
}

UcxTransport::~UcxTransport() {
  progress_thread_.Halt([this] { ucp_worker_signal(worker_.get()); });
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void UcxTransport::Start(ReceiveHandler handler, PayloadPlacer placer) {
  handler_ = std::move(handler);
  placer_ = std::move(placer);
  for (const auto& path : paths_) {
    for (unsigned id : path->message_ids()) receivers_.push_back({path.get(), id});
  }
  for (Receiver& receiver : receivers_) {
    worker_.SetHandler(receiver.id, &UcxTransport::OnActiveMessage, &receiver);
  }
  shared_memory_->Connect(bootstrap_, Milliseconds(timeout_s_));
  // The handlers are installed before any peer learns our address, so no message can arrive early.
  worker_.Connect(bootstrap_, Milliseconds(timeout_s_));
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = worker_.event_fd();
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, worker_.event_fd(), &ev) != 0) {
    throw Error("UCX: epoll_ctl on the worker's event fd failed");
  }
  started_ = true;
  progress_thread_.Start([this] { ProgressLoop(); });
}

ucs_status_t UcxTransport::OnActiveMessage(void* arg, const void* header, size_t header_length,
                                           void* data, size_t length,
                                           const ucp_am_recv_param_t* param) {
  const Receiver* receiver = static_cast<const Receiver*>(arg);
  return receiver->path->Receive(receiver->id, header, header_length, data, length, param);
}

void UcxTransport::SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                             SendCallback on_sent) {
  CheckDestination(dst);
  auto* send = new OutgoingSend();
  send->transport = this;
  send->dst = dst;
  send->header = std::move(header);
  send->fragments = std::move(payload);
  for (const Buffer& f : send->fragments) send->bytes += static_cast<int64_t>(f.size());
  if (static_cast<size_t>(send->bytes) < rndv_threshold_) {
    eager_->Take(*send);
    send->path = eager_;
  } else {
    for (PayloadPath* path : large_paths_) {
      if (path->Take(*send)) {
        send->path = path;
        break;
      }
    }
  }
  for (const Buffer& f : send->fragments) {
    send->iov.push_back(ucp_dt_iov_t{const_cast<uint8_t*>(f.data()), f.size()});
  }
  send->on_sent = std::move(on_sent);
  if (!limiter_.Admit(dst, send->bytes, send)) return;  // posted later, when completions make room
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queued_sends_.push_back(send);
  }
  if (driving != this && started_ && !progress_thread_.stopping()) {
    CountedScope driver(streams_ ? &drivers_ : nullptr);  // see the class comment
    std::unique_lock<std::mutex> lock(progress_mu_, std::try_to_lock);
    if (lock.owns_lock()) {
      DrivingScope scope(this);
      PostQueuedSends();
      return;
    }
  }
  // Paired with the progress thread's store to sleeping_ and its re-check of the queue: either it
  // sees the send, or we see it sleeping and wake it.
  if (sleeping_.load()) ucp_worker_signal(worker_.get());
}

void UcxTransport::SendRawActiveMessage(int dst, unsigned id, std::vector<uint8_t> header,
                                        std::vector<uint8_t> payload) {
  CheckDestination(dst);
  struct Raw : PathData {
    std::vector<uint8_t> bytes;
  };
  auto* send = new OutgoingSend();
  send->dst = dst;
  send->path = eager_;  // which posts it as it is, under its id
  send->message_id = id;
  send->capped = false;
  send->header = std::move(header);
  auto raw = std::make_unique<Raw>();
  raw->bytes = std::move(payload);
  if (!raw->bytes.empty()) send->iov.push_back({raw->bytes.data(), raw->bytes.size()});
  send->path_data = std::move(raw);
  QueueUncapped(send);
  if (sleeping_.load()) ucp_worker_signal(worker_.get());
}

std::map<std::string, int64_t> UcxTransport::SendsByPath() const {
  std::map<std::string, int64_t> sends;
  for (const auto& path : paths_) sends[path->name()] = path->posted();
  return sends;
}

bool UcxTransport::Drive() {
  DrivingScope scope(this);
  bool active = ucp_worker_progress(worker_.get()) != 0;
  active = RunDeferredWork() || active;
  // Only on a pass that found nothing: a stream missing its pieces leaves the driver idle, and a
  // busy pass need not read the clock.
  if (!active) streamed_->DropStaleStreams();
  return active;
}

bool UcxTransport::RunDeferredWork() {
  bool active = PostQueuedSends();
  std::vector<std::pair<OutgoingSend*, ucs_status_t>> sends_done;
  sends_done.swap(sends_done_);
  for (auto& [send, status] : sends_done) FinishSend(send, status);
  if (!sends_done.empty()) {
    PostQueuedSends();  // the sends their completions made room for
    active = true;
  }
  active = rendezvous_->RunDeferred() || active;
  std::vector<Message> received;
  received.swap(received_);
  for (Message& msg : received) handler_(std::move(msg));
  return active || !received.empty();
}

void UcxTransport::ProgressLoop() {
  IdlePoller poller(std::chrono::microseconds{spin_us_});
  while (!progress_thread_.stopping()) {
    if (drivers_.load() > 0 && !HasQueuedSends()) {
      // A caller drives. Callers come and go with every request, so they do not wake us when
      // they leave (a wake-up per request would cost more than the hop it saves); we look again
      // soon instead, in case messages arrive while no one drives. A send queued while a poster
      // was counted, but did not get to drive, is ours to post.
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
    if (drivers_.load() > 0 || HasQueuedSends() || ucp_worker_arm(worker_.get()) == UCS_ERR_BUSY) {
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
  if (driving == this || !started_ || progress_thread_.stopping()) return false;
  CountedScope driver(&drivers_);
  IdlePoller poller(spin);
  while (!done() && !progress_thread_.stopping() && std::chrono::steady_clock::now() < deadline) {
    std::unique_lock<std::mutex> lock(progress_mu_);
    const bool active = Drive();
    lock.unlock();
    if (poller.PollAgain(active)) continue;
    lock.lock();
    const bool busy = done() || HasQueuedSends() || ucp_worker_arm(worker_.get()) == UCS_ERR_BUSY;
    lock.unlock();
    if (busy) continue;
    // At most 1 ms: another thread may finish what we wait for without a message arriving.
    epoll_event ev;
    epoll_wait(epoll_fd_, &ev, 1, /*timeout_ms=*/1);
  }
  return true;
}

void UcxTransport::Stop() {
  if (!started_) return;
  progress_thread_.Stop(
      rank_, timeout_s_, [this](std::chrono::milliseconds t) { return limiter_.WaitIdle(t); },
      // Peers may still be fetching rendezvous data from us or sending to us: keep progressing
      // until every rank has completed its own sends.
      [this] { bootstrap_.Barrier(Milliseconds(timeout_s_)); },
      [this] { ucp_worker_signal(worker_.get()); });
  std::lock_guard<std::mutex> lock(progress_mu_);
  worker_.CloseEndpoints();
}

void UcxTransport::Abandon() {
  if (!started_) return;
  progress_thread_.Halt([this] { ucp_worker_signal(worker_.get()); });
  std::lock_guard<std::mutex> lock(progress_mu_);
  worker_.CloseEndpoints();
}

}  // namespace pacer
