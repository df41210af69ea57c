#pragma once

#include <mpi.h>
#include <pacer/parameter_server.h>
#include <pacer/session.h>

#include <functional>

namespace pacer {
namespace bench {

// What every rank of an MPI app does (the app initialized MPI): servers run a ParameterServer,
// the scheduler coordinates, workers run `train` with a communicator of the workers alone (for
// the app's own gathers, through LiveWorkers). Each finalizes the session, then MPI unless the job
// went on without a worker. `schedule`, if set, runs on the scheduler before it finalizes (orders
// it gives while the workers train); `served`, if set, on each server once the job is done (what
// its keys went through). Returns `train`'s exit status on workers, 0 elsewhere.
int RunRoles(Session& session, const std::function<int(MPI_Comm workers)>& train,
             const std::function<void()>& schedule = nullptr,
             const std::function<void(ParameterServer&)>& served = nullptr);

// An app's main: `run` inside a try; an exception prints "program: what" and exits 2.
int GuardedMain(const char* program, int (*run)(int, char**), int argc, char** argv);

}  // namespace bench
}  // namespace pacer
