#include "ps/transport/transport_choice.h"

#include <glog/logging.h>

#include <chrono>

#include "pacer/error.h"
#include "ps/transport/mpi_transport.h"
#include "ps/transport/ucx/ucx_transport.h"

namespace pacer {

std::unique_ptr<Transport> OpenTransport(const std::string& choice, MpiBootstrap& bootstrap,
                                         const TransportTuning& tuning, double timeout_s,
                                         Role role) {
  if (choice != "ucx" && choice != "mpi" && choice != "auto") {
    throw Error("unknown transport '" + choice + "': use ucx, mpi or auto");
  }
  if (choice == "mpi") {
    return std::make_unique<MpiTransport>(bootstrap.DuplicateCommunicator(), tuning, timeout_s);
  }
  std::unique_ptr<Transport> ucx;
  std::string why;
  try {
    UcxTransport::Options options;
    options.tuning = tuning;
    options.timeout_s = timeout_s;
    options.rendezvous = UcxTransport::RendezvousFor(role);
    ucx = std::make_unique<UcxTransport>(bootstrap, options);
  } catch (const Error& e) {
    why = e.what();
  }
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  bool everywhere = true;
  for (const Bootstrap::Bytes& ok : bootstrap.AllGather({ucx != nullptr}, timeout)) {
    everywhere = everywhere && ok.size() == 1 && ok[0] != 0;
  }
  if (everywhere) return ucx;
  ucx.reset();
  if (choice == "ucx") {
    throw Error("transport ucx requested but UCX did not initialize: " +
                (why.empty() ? std::string("it failed on another rank") : why));
  }
  if (bootstrap.rank() == 0) {
    LOG(WARNING) << "UCX did not initialize on every rank (" << (why.empty() ? "elsewhere" : why)
                 << "); using the MPI transport";
  }
  return std::make_unique<MpiTransport>(bootstrap.DuplicateCommunicator(), tuning, timeout_s);
}

}  // namespace pacer
