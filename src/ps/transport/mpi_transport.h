#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/buffer_pool.h"
#include "pacer/transport_tuning.h"
#include "ps/transport/inflight_limiter.h"
#include "ps/transport/progress_thread.h"
#include "ps/transport/transport.h"

namespace pacer {

// MPI point-to-point, the fallback where UCX does not initialize. Each message is two MPI messages
// to the same rank: a frame (payload length, then the wire header) and the payload, described by
// an hindexed datatype over the caller's fragments so nothing is gathered. Both are posted under
// one lock, so MPI's non-overtaking rule pairs every frame with its payload. MPI has no event fd:
// the progress thread polls for spin_us, then backs off with short sleeps (at most 200 us).
// Needs MPI_THREAD_MULTIPLE.
class MpiTransport : public Transport {
 public:
  // Takes ownership of `comm`. Throws Error unless MPI runs with MPI_THREAD_MULTIPLE.
  MpiTransport(MPI_Comm comm, const TransportTuning& tuning, double timeout_s);
  ~MpiTransport() override;

  std::string name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Start(ReceiveHandler handler, PayloadPlacer placer) override;
  void SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                 SendCallback on_sent) override;
  void Stop() override;
  void Abandon() override;

 private:
  struct SendContext;
  struct PendingReceive;

  void Post(SendContext* ctx);
  bool ProbeFrames();
  bool TestSends();
  bool TestReceives();
  void Deliver(PendingReceive& receive);
  void ProgressLoop();

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 0;
  int spin_us_ = 0;
  double timeout_s_;

  ReceiveHandler handler_;
  PayloadPlacer placer_;
  InflightLimiter<SendContext*> limiter_;
  BufferPool pool_;
  ProgressThread progress_thread_;

  std::mutex order_mu_;  // held from a send's admission to its post: sends to a peer keep order
  std::mutex send_mu_;   // orders frame/payload pairs; guards sends_
  std::vector<std::unique_ptr<SendContext>> sends_;
  std::vector<std::unique_ptr<PendingReceive>> receives_;  // progress thread only
};

}  // namespace pacer
