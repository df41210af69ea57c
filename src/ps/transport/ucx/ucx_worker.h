#pragma once

#include <ucp/api/ucp.h>

#include <chrono>
#include <string>
#include <vector>

#include "ps/bootstrap/bootstrap.h"

namespace pacer {

// One rank's UCX context and worker, and its endpoints to every rank of the job (itself
// included). The worker runs in serialized mode, without UCX's own locks: its owner lets one
// thread at a time drive it. Active messages are received by handlers installed before Connect,
// so none can arrive early.
class UcxWorker {
 public:
  struct Settings {
    // How UCX moves rendezvous data, where UCX_RNDV_SCHEME leaves it to the program: the sender
    // writes it into the receiver's buffer (put), or the receiver reads it (get).
    bool sender_writes = true;
    // UCX's transports and network devices, as UCX_TLS and UCX_NET_DEVICES spell them; empty:
    // those variables, or UCX's defaults.
    std::string tls;
    std::string net_devices;
  };

  // Throws Error naming the call that failed when UCX does not initialize.
  explicit UcxWorker(const Settings& settings);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  ucp_worker_h get() const { return worker_; }
  // The file descriptor that becomes readable when the worker has work (after Arm).
  int event_fd() const { return event_fd_; }
  ucp_ep_h endpoint(int rank) const { return endpoints_[rank]; }

  // Receives active messages of `id` with `callback`, called with `arg`.
  void SetHandler(unsigned id, ucp_am_recv_callback_t callback, void* arg);
  // Collective: exchanges worker addresses through `bootstrap` and opens an endpoint per rank.
  void Connect(Bootstrap& bootstrap, std::chrono::milliseconds timeout);
  // Closes the endpoints, progressing the worker until they are closed.
  void CloseEndpoints();

 private:
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;
  std::vector<ucp_ep_h> endpoints_;
};

// Throws Error naming `what` unless `status` is UCS_OK.
void CheckUcs(ucs_status_t status, const char* what);

}  // namespace pacer
