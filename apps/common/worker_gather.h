#pragma once

#include <mpi.h>
#include <pacer/session.h>

#include <vector>

namespace pacer {
namespace bench {

// The workers the job still has, of `workers` (every worker, ranked by role index): `workers`
// itself while none was excluded (Session::excluded_workers), else a communicator of the live
// ones, made by them alone (MPI_Comm_create_group). Make it after a barrier of the workers, which
// every live worker leaves knowing the same exclusions.
class LiveWorkers {
 public:
  LiveWorkers(const Session& session, MPI_Comm workers);
  ~LiveWorkers();
  LiveWorkers(const LiveWorkers&) = delete;
  LiveWorkers& operator=(const LiveWorkers&) = delete;

  MPI_Comm comm() const { return comm_; }
  int size() const;

 private:
  MPI_Comm comm_;
  bool owned_ = false;
};

// Every rank's `mine`, concatenated in rank order, at rank 0 of `comm` (empty elsewhere).
std::vector<double> GatherAll(MPI_Comm comm, const std::vector<double>& mine);
// The element-wise sum of every rank's `mine` at rank 0 of `comm` (zeros elsewhere).
std::vector<double> SumAtRoot(MPI_Comm comm, const std::vector<double>& mine);

}  // namespace bench
}  // namespace pacer
