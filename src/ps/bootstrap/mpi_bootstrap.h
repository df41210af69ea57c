#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "ps/bootstrap/bootstrap.h"

namespace pacer {

// The bootstrap of a job that mpirun or srun launched: the ranks of MPI_COMM_WORLD. It
// initializes MPI (with MPI_THREAD_MULTIPLE) unless the program already did, and then finalizes
// it when it goes. Its collectives are MPI's non-blocking ones, polled until their deadline.
class MpiBootstrap : public Bootstrap {
 public:
  MpiBootstrap();
  ~MpiBootstrap() override;
  MpiBootstrap(const MpiBootstrap&) = delete;
  MpiBootstrap& operator=(const MpiBootstrap&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& host() const override { return host_; }
  std::vector<Bytes> AllGather(const Bytes& mine, std::chrono::milliseconds timeout) override;
  void Barrier(std::chrono::milliseconds timeout) override;
  void Abandon() override { left_without_finalize_ = true; }

  // A communicator of the job's ranks for a transport of its own (MpiTransport), which frees it.
  MPI_Comm DuplicateCommunicator() const;

 private:
  // Polls `request` until it completes; throws TimeoutError naming `what` after `timeout`. MPI
  // cannot cancel a collective: a timed-out one keeps `buffers` (what it reads and writes) as
  // long as this bootstrap lives.
  void Complete(MPI_Request* request, const char* what, std::chrono::milliseconds timeout,
                std::shared_ptr<void> buffers);

  bool finalize_mpi_ = false;  // this bootstrap initialized MPI
  bool left_without_finalize_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  std::string host_;
  std::vector<std::shared_ptr<void>> abandoned_;  // the buffers of timed-out collectives
};

}  // namespace pacer
