#include "ps/bootstrap/mpi_bootstrap.h"

#include <algorithm>
#include <thread>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

MpiBootstrap::MpiBootstrap() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    finalize_mpi_ = true;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  host_.assign(name, static_cast<size_t>(length));
}

MpiBootstrap::~MpiBootstrap() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || left_without_finalize_) return;
  MPI_Comm_free(&comm_);
  if (finalize_mpi_) MPI_Finalize();
}

MPI_Comm MpiBootstrap::DuplicateCommunicator() const {
  MPI_Comm copy;
  MPI_Comm_dup(comm_, &copy);
  return copy;
}

void MpiBootstrap::Complete(MPI_Request* request, const char* what,
                            std::chrono::milliseconds timeout, std::shared_ptr<void> buffers) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    int done = 0;
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      abandoned_.push_back(std::move(buffers));
      throw TimeoutError(StrCat("rank ", rank_, ": the job's ", what, " timed out after ",
                                timeout.count(), " ms: some rank of ", size_, " never came"));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

namespace {

// What one AllGather's collectives read and write.
struct Exchange {
  Bootstrap::Bytes mine;
  int length = 0;
  std::vector<int> lengths, offsets;
  std::vector<uint8_t> all;
};

}  // namespace

std::vector<Bootstrap::Bytes> MpiBootstrap::AllGather(const Bytes& mine,
                                                      std::chrono::milliseconds timeout) {
  auto x = std::make_shared<Exchange>();
  x->mine = mine;
  x->length = static_cast<int>(mine.size());
  x->lengths.resize(size_);
  x->offsets.resize(size_);
  MPI_Request request;
  MPI_Iallgather(&x->length, 1, MPI_INT, x->lengths.data(), 1, MPI_INT, comm_, &request);
  Complete(&request, "exchange of lengths", timeout, x);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    x->offsets[r] = total;
    total += x->lengths[r];
  }
  x->all.resize(static_cast<size_t>(total));
  MPI_Iallgatherv(x->mine.data(), x->length, MPI_BYTE, x->all.data(), x->lengths.data(),
                  x->offsets.data(), MPI_BYTE, comm_, &request);
  Complete(&request, "exchange of announcements", timeout, x);
  std::vector<Bytes> by_rank(size_);
  for (int r = 0; r < size_; ++r) {
    const auto begin = x->all.begin() + x->offsets[r];
    by_rank[r].assign(begin, begin + x->lengths[r]);
  }
  return by_rank;
}

void MpiBootstrap::Barrier(std::chrono::milliseconds timeout) {
  MPI_Request request;
  MPI_Ibarrier(comm_, &request);
  Complete(&request, "barrier", timeout, nullptr);
}

}  // namespace pacer
