// GradientSync between processes: softmax regression trains in every mode, BSP equals a
// single-process run, SSP(2) bounds the clock gap with a slowed worker, a switch loses nothing.
#include <gtest/gtest.h>
#include <mpi.h>

#include "../common/training.h"
#include "mpi_test_config.h"
#include "pacer/session.h"

namespace pacer {
namespace {

void Train(const testing::TrainingCase& c) {
  const Config config = testing::TrainingConfig(MpiTestConfig(), c);
  Session session(config);
  // The workers' own communicator, for gathering their clock logs.
  MPI_Comm workers;
  MPI_Comm_split(MPI_COMM_WORLD, session.is_worker() ? 0 : MPI_UNDEFINED, session.rank(), &workers);
  testing::TrainSoftmax(session, c.options, [&](const std::vector<double>& mine) {
    std::vector<double> all(mine.size() * session.num_workers());
    MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                  static_cast<int>(mine.size()), MPI_DOUBLE, workers);
    return all;
  });
  if (workers != MPI_COMM_NULL) MPI_Comm_free(&workers);
  session.Finalize();
}

class TrainingMpiTest : public ::testing::TestWithParam<testing::TrainingCase> {};

TEST_P(TrainingMpiTest, Processes) { Train(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Softmax, TrainingMpiTest, ::testing::ValuesIn(testing::TrainingCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace pacer
