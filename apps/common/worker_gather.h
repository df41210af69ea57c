#pragma once

#include <mpi.h>

#include <vector>

namespace pacer {
namespace bench {

// Every rank's `mine`, concatenated in rank order, at rank 0 of `comm` (empty elsewhere).
std::vector<double> GatherAll(MPI_Comm comm, const std::vector<double>& mine);
// The element-wise sum of every rank's `mine` at rank 0 of `comm` (zeros elsewhere).
std::vector<double> SumAtRoot(MPI_Comm comm, const std::vector<double>& mine);

}  // namespace bench
}  // namespace pacer
