// Runs every MPI test on every rank: `mpirun -np N pacer-mpi-tests --servers S --transport T`.
// MPI is initialized here, before any Session, as a training program embedding Pacer would do.
// Only rank 0 prints the usual report; other ranks print their failures, marked with their rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "mpi_test_config.h"

namespace pacer {
namespace {

Config g_config;

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
  }

 private:
  int rank_;
};

}  // namespace

const Config& MpiTestConfig() { return g_config; }

}  // namespace pacer

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  pacer::g_config = pacer::Config::ParseCommandLine(&argc, &argv);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new pacer::FailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !failed) std::fprintf(stderr, "a test failed on another rank\n");
  MPI_Finalize();
  return any_failed;
}
