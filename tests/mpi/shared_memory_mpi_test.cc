// Shared-memory routes between processes: each rank writes into its ring for the next rank, which
// reads the payload through its own mapping; messages that describe no record are refused.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ps/transport/shared_memory_routes.h"

namespace pacer {
namespace {

std::vector<uint8_t> PayloadOf(int rank) {
  std::vector<uint8_t> v(100003);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(rank * 31 + i * 7 + i / 253);
  return v;
}

TEST(SharedMemoryMpiTest, EachRankReadsThePayloadItsNeighbourWrote) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SharedMemoryRoutes routes(rank, size, 1 << 20);
  routes.Connect(MPI_COMM_WORLD);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const std::vector<uint8_t> mine = PayloadOf(rank);
  EXPECT_FALSE(routes.Write(rank, {Buffer(mine.data(), mine.size())}, mine.size()))
      << "no rank maps its own ring";
  std::optional<SharedMemoryLocation> written =
      routes.Write(next, {Buffer(mine.data(), mine.size())}, mine.size());
  ASSERT_TRUE(written.has_value());
  SharedMemoryLocation where;
  MPI_Sendrecv(&*written, sizeof where, MPI_BYTE, next, 0, &where, sizeof where, MPI_BYTE, prev, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);

  Buffer payload;
  std::string error;
  ASSERT_TRUE(routes.Read(prev, &where, sizeof where, where.length, &payload, &error)) << error;
  const std::vector<uint8_t> expected = PayloadOf(prev);
  ASSERT_EQ(payload.size(), expected.size());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), payload.data()));

  const std::string p = std::to_string(prev);
  EXPECT_FALSE(routes.Read(prev, &where, sizeof where, where.length + 1, &payload, &error));
  EXPECT_EQ(error, "rank " + p + " sent a payload of 100003 bytes, but its header declares 100004");
  EXPECT_FALSE(routes.Read(prev, &where, 4, where.length, &payload, &error));
  EXPECT_EQ(error, "rank " + p + " sent a shared-memory location of 4 bytes");
  EXPECT_FALSE(routes.Read(rank, &where, sizeof where, where.length, &payload, &error));
  EXPECT_EQ(error, "rank " + std::to_string(rank) +
                       " sent a payload in shared memory, but its ring is not mapped here");
  payload = Buffer();
  MPI_Barrier(MPI_COMM_WORLD);  // every reader is done before the rings go
}

}  // namespace
}  // namespace pacer
