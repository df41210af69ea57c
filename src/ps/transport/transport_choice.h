#pragma once

#include <memory>
#include <string>

#include "pacer/transport_tuning.h"
#include "pacer/types.h"
#include "ps/bootstrap/mpi_bootstrap.h"
#include "ps/transport/transport.h"

namespace pacer {

// The transport of a rank of a job that mpirun or srun launched, as --transport names it: "ucx",
// "mpi", or "auto" (UCX where it initializes on every rank, else MPI, with a log line). Every rank
// must pick the same one, so this is collective. Throws Error for another name, or for "ucx"
// where UCX does not initialize.
std::unique_ptr<Transport> OpenTransport(const std::string& choice, MpiBootstrap& bootstrap,
                                         const TransportTuning& tuning, double timeout_s,
                                         Role role);

}  // namespace pacer
