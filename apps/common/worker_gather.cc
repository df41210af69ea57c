#include "worker_gather.h"

namespace pacer {
namespace bench {

LiveWorkers::LiveWorkers(const Session& session, MPI_Comm workers) : comm_(workers) {
  const std::vector<int> excluded = session.excluded_workers();
  if (excluded.empty()) return;
  MPI_Group all, live;
  MPI_Comm_group(workers, &all);
  MPI_Group_excl(all, static_cast<int>(excluded.size()), excluded.data(), &live);
  MPI_Comm_create_group(workers, live, /*tag=*/0, &comm_);
  MPI_Group_free(&live);
  MPI_Group_free(&all);
  owned_ = true;
}

LiveWorkers::~LiveWorkers() {
  if (owned_) MPI_Comm_free(&comm_);
}

int LiveWorkers::size() const {
  int size = 0;
  MPI_Comm_size(comm_, &size);
  return size;
}

std::vector<double> GatherAll(MPI_Comm comm, const std::vector<double>& mine) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(size), offsets(size, 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (int i = 1; i < size; ++i) offsets[i] = offsets[i - 1] + counts[i - 1];
  std::vector<double> all(rank == 0 ? offsets.back() + counts.back() : 0);
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
              0, comm);
  return all;
}

std::vector<double> SumAtRoot(MPI_Comm comm, const std::vector<double>& mine) {
  std::vector<double> sums(mine.size());
  MPI_Reduce(mine.data(), sums.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_SUM, 0, comm);
  return sums;
}

}  // namespace bench
}  // namespace pacer
