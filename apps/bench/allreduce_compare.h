#pragma once

#include <mpi.h>
#include <pacer/kv_worker.h>
#include <pacer/session.h>

#include <cstddef>

namespace pacer {
namespace bench {

struct AllreduceFigures {
  double allreduce_ms;  // MPI_Allreduce of the gradients over the workers (Horovod's CPU path)
  double pacer_ms;      // Pacer: push the gradients, barrier, pull the sums back
};

// Times both ways of summing `bytes` of float gradients per worker over the workers (median of
// `repeats` runs each, taking turns, each run the slowest worker's time) and checks every sum
// exactly. Collective over `workers` (the workers' communicator); the gradients are split into
// `chunk_bytes` keys, each server owning one contiguous region of them.
AllreduceFigures CompareWithAllreduce(Session& session, KVWorker<float>& kv, MPI_Comm workers,
                                      size_t bytes, size_t chunk_bytes, int repeats);

}  // namespace bench
}  // namespace pacer
