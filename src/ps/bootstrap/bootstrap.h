#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace pacer {

// How the ranks of a job meet before any transport runs, in the manner of gloo's rendezvous
// store: each rank knows its rank, the job's size and its host, and the ranks exchange small
// blobs (UCX worker addresses, shared-memory announcements) in collective steps. MpiBootstrap
// serves processes that mpirun or srun launched; LocalBootstrap serves ranks that are threads of
// one process (tests), so that every transport can run in one process too.
//
// Collectives: every rank calls them, in the same order. Each has a deadline and throws
// TimeoutError when the other ranks do not all arrive within it, so a rank that died before the
// job began cannot hang the others.
class Bootstrap {
 public:
  using Bytes = std::vector<uint8_t>;

  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's host: ranks with the same host share memory.
  virtual const std::string& host() const = 0;

  // Every rank's `mine`, by rank.
  virtual std::vector<Bytes> AllGather(const Bytes& mine, std::chrono::milliseconds timeout) = 0;
  // Returns once every rank has called it.
  virtual void Barrier(std::chrono::milliseconds timeout) = 0;
  // The job lost a rank: leave without meeting the others (no collective end, no MPI_Finalize,
  // which would wait for the lost rank).
  virtual void Abandon() {}

  // Every rank's host, by rank: collective the first time (every rank asks at the same point),
  // remembered after that, since hosts do not change.
  const std::vector<std::string>& Hosts(std::chrono::milliseconds timeout);

 private:
  std::vector<std::string> hosts_;  // empty until the first Hosts
};

}  // namespace pacer
