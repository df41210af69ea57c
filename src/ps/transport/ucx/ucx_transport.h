#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/buffer_pool.h"
#include "pacer/transport_tuning.h"
#include "pacer/types.h"
#include "ps/bootstrap/bootstrap.h"
#include "ps/transport/inflight_limiter.h"
#include "ps/transport/progress_thread.h"
#include "ps/transport/transport.h"
#include "ps/transport/ucx/payload_path.h"
#include "ps/transport/ucx/shared_memory_routes.h"
#include "ps/transport/ucx/ucx_worker.h"

namespace pacer {

class RendezvousPath;
class StreamedPath;

// UCP active messages between the ranks of a job, its endpoints made from worker addresses
// exchanged through the job's Bootstrap (MPI, or the ranks of one process). The wire header rides
// in the active message's header. How a payload travels is its PayloadPath's business: below
// rndv_threshold as the message's data (EagerPath); above it through the sender's shared-memory
// ring (RingPath) or as a description the receiver reads from the sender's memory
// (DescribedPath), where the ranks share a host; over TCP alone, streamed in pieces
// (StreamedPath); else by UCX's own rendezvous (RendezvousPath).
//
// One thread at a time drives UCX (its worker runs in serialized mode, without UCX's own locks):
// whoever holds progress_mu_. Usually that is the progress thread, which polls for at most spin_us
// after the last activity, then blocks on the worker's event fd, so that idle ranks leave the
// cores to busy ones. A thread waiting for a reply drives it instead (PollUntil) while the
// progress thread steps aside: the reply is handled where it is awaited, and a host keeps one
// polling thread per process, not two. A sending thread posts its send itself when no one else is
// driving, else queues it for the driver. On a rank that streams, a posting thread also counts as
// a driver while it posts: the kernel moves a streamed payload within the posting thread's own
// calls, and a progress thread woken meanwhile (by the completions its caller comes back for)
// would only contend for the socket and the caller's core. Over shared memory the progress
// thread's work is a copy of its own, beside the caller's, so there it does not step aside.
class UcxTransport : public Transport, private PathServices {
 public:
  // How this rank's large payloads move, unless UCX_RNDV_SCHEME says otherwise (the sender's
  // choice decides): the sender writes them into the receiver's buffer (and, where it streams or
  // has a ring, uses those), or the receiver reads them (and the sender describes them).
  enum class Rendezvous { kSenderWrites, kReceiverReads };
  // A copy between processes pins the other process's pages, so the side whose buffers lie on huge
  // pages (a server's pool) should be the other one: servers send their stored values and let the
  // worker read them; workers send their callers' memory and write it into the servers' pooled
  // buffers.
  static Rendezvous RendezvousFor(Role role) {
    return role == Role::kServer ? Rendezvous::kReceiverReads : Rendezvous::kSenderWrites;
  }

  struct Options {
    TransportTuning tuning;
    double timeout_s = 120;
    Rendezvous rendezvous = Rendezvous::kSenderWrites;
    // UCX's transports and network devices for this transport alone (UCX_TLS and UCX_NET_DEVICES
    // where empty): what lets ranks in one process talk over TCP.
    std::string tls;
    std::string net_devices;
  };

  // Collective over `bootstrap`'s ranks, which it uses until it stops (the bootstrap must outlive
  // it). Throws Error if UCX does not initialize.
  UcxTransport(Bootstrap& bootstrap, const Options& options);
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
  void Abandon() override;
  std::shared_ptr<void> LendSharedMemory(size_t bytes) override {
    return shared_memory_->Lend(bytes);
  }
  bool PollUntil(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline,
                 std::chrono::microseconds spin) override;

  // How many sends each path posted, by the path's name (what carried this rank's payloads).
  std::map<std::string, int64_t> SendsByPath() const;
  // Posts an active message of `id` with these bytes as they are, past every path's checks: what
  // a test uses to deliver input no path would produce.
  void SendRawActiveMessage(int dst, unsigned id, std::vector<uint8_t> header,
                            std::vector<uint8_t> payload);

 private:
  // A path's receiving end, as UCX calls it.
  struct Receiver {
    PayloadPath* path;
    unsigned id;
  };
  static ucs_status_t OnActiveMessage(void* arg, const void* header, size_t header_length,
                                      void* data, size_t length, const ucp_am_recv_param_t* param);
  static void OnSendDone(void* request, ucs_status_t status, void* user_data);

  // PathServices (rank() and size() are Transport's).
  double timeout_s() const override { return timeout_s_; }
  ucp_worker_h worker() override { return worker_.get(); }
  BufferPool& pool() override { return pool_; }
  void PostActiveMessage(OutgoingSend& send, unsigned id, const void* header, size_t header_length,
                         const void* buffer, size_t count, ucp_datatype_t datatype,
                         uint32_t flags) override;
  void CompleteLater(OutgoingSend* send, ucs_status_t status) override {
    sends_done_.emplace_back(send, status);
  }
  void QueueUncapped(OutgoingSend* send) override;
  void DeliverLater(Message&& msg) override { received_.push_back(std::move(msg)); }
  void Deliver(Message&& msg) override { handler_(std::move(msg)); }
  uint8_t* Place(const DecodedHeader& header) override {
    return placer_ ? placer_(header) : nullptr;
  }
  std::shared_ptr<PayloadConsumer> ConsumerFor(const Message& msg) override {
    return consumers_ ? consumers_(msg) : nullptr;
  }

  // Makes the paths this rank sends and receives by.
  void AddPaths(const Options& options, bool shared_memory);
  void Post(OutgoingSend* send);
  void FinishSend(OutgoingSend* send, ucs_status_t status);
  // One pass of UCX progress and of the work it found; the caller holds progress_mu_.
  bool Drive();
  bool RunDeferredWork();
  bool PostQueuedSends();  // returns whether it posted any
  bool HasQueuedSends();
  void ProgressLoop();

  Bootstrap& bootstrap_;
  const int rank_;
  const int size_;
  const int spin_us_;
  const double timeout_s_;
  const size_t rndv_threshold_;

  UcxWorker worker_;
  int epoll_fd_ = -1;

  ReceiveHandler handler_;
  PayloadPlacer placer_;
  PayloadConsumerFactory consumers_;
  InflightLimiter<OutgoingSend*> limiter_;
  BufferPool pool_;
  std::unique_ptr<SharedMemoryRoutes> shared_memory_;
  std::vector<std::unique_ptr<PayloadPath>> paths_;  // owned; the lists below point into it
  PayloadPath* eager_ = nullptr;                     // below rndv_threshold
  RendezvousPath* rendezvous_ = nullptr;             // the one path with work after callbacks
  StreamedPath* streamed_ = nullptr;                 // the one path with work on idle passes
  std::vector<PayloadPath*> large_paths_;            // at or above it, in the order they are tried
  std::vector<Receiver> receivers_;                  // by registration; UCX holds pointers into it
  bool streams_ = false;                             // a path streams over TCP (see above)

  ProgressThread progress_thread_;
  std::atomic<bool> sleeping_{false};  // the progress thread is (about to be) blocked
  std::mutex progress_mu_;             // held by the thread driving UCX
  // Threads driving on their own account (in PollUntil or, where this rank streams, posting); the
  // progress thread steps aside meanwhile.
  std::atomic<int> drivers_{0};
  bool started_ = false;

  // Sends admitted by other threads, posted by the driver.
  std::mutex queue_mu_;
  std::vector<OutgoingSend*> queued_sends_;

  // Work found inside UCX callbacks, run by the driver outside them, so that handlers and
  // completion callbacks may call Send. Guarded by progress_mu_.
  std::vector<Message> received_;
  std::vector<std::pair<OutgoingSend*, ucs_status_t>> sends_done_;
};

// Whether UCX_TLS (`tls`, or null when unset) lets UCX use shared memory. A job that names its
// transports (UCX_TLS=tcp) gets only those: no ring either.
bool UcxTlsAllowsSharedMemory(const char* tls);

}  // namespace pacer
