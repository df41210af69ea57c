// Shared-memory routes between processes: each rank writes into its ring for the next rank of its
// host, which reads the payload through its own mapping, and describes a payload in its memory,
// which that rank copies out; messages that describe no record, or not the payload their header
// declares, are refused. No route joins ranks of different hosts.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ps/bootstrap/mpi_bootstrap.h"
#include "ps/transport/ucx/shared_memory_routes.h"

namespace pacer {
namespace {

std::vector<uint8_t> PayloadOf(int rank) {
  std::vector<uint8_t> v(100003);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(rank * 31 + i * 7 + i / 253);
  return v;
}

// The ranks after and before `rank` among the ranks of its host, in rank order and round: the
// routes join only ranks of one host. Both are `rank` itself where it is alone on its host.
struct Neighbours {
  int next, prev;
};
Neighbours NeighboursOnItsHost(MpiBootstrap& bootstrap, int rank) {
  const std::vector<std::string>& hosts = bootstrap.Hosts(std::chrono::seconds(60));
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r) {
    if (hosts[r] == hosts[rank]) ranks.push_back(r);
  }
  const int n = static_cast<int>(ranks.size());
  const int at = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
  return {ranks[(at + 1) % n], ranks[(at + n - 1) % n]};
}

TEST(SharedMemoryMpiTest, RoutesJoinOnlyRanksOfOneHost) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SharedMemoryRoutes routes(rank, size, 1 << 20, /*read_threads=*/1);
  MpiBootstrap bootstrap;
  routes.Connect(bootstrap, std::chrono::seconds(60));
  const std::vector<std::string>& hosts = bootstrap.Hosts(std::chrono::seconds(60));
  const std::vector<uint8_t> mine = PayloadOf(rank);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    const bool same_host = hosts[peer] == hosts[rank];
    EXPECT_EQ(routes.ReadsOurs(peer), same_host) << "rank " << peer << " on " << hosts[peer];
    EXPECT_EQ(routes.Write(peer, {Buffer(mine.data(), 4096)}, 4096).has_value(), same_host)
        << "rank " << peer << " on " << hosts[peer];
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(SharedMemoryMpiTest, EachRankReadsThePayloadItsNeighbourWrote) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SharedMemoryRoutes routes(rank, size, 1 << 20, /*read_threads=*/0);
  MpiBootstrap bootstrap;
  routes.Connect(bootstrap, std::chrono::seconds(60));
  const auto [next, prev] = NeighboursOnItsHost(bootstrap, rank);
  if (next == rank) {
    MPI_Barrier(MPI_COMM_WORLD);
    GTEST_SKIP() << "rank " << rank << " is alone on its host";
  }
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

TEST(SharedMemoryMpiTest, EachRankCopiesThePayloadItsNeighbourDescribed) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SharedMemoryRoutes routes(rank, size, 0, /*read_threads=*/3);
  MpiBootstrap bootstrap;
  routes.Connect(bootstrap, std::chrono::seconds(60));
  const auto [next, prev] = NeighboursOnItsHost(bootstrap, rank);
  if (next == rank) {
    MPI_Barrier(MPI_COMM_WORLD);
    GTEST_SKIP() << "rank " << rank << " is alone on its host";
  }
  EXPECT_TRUE(routes.ReadsOurs(next));
  EXPECT_FALSE(routes.ReadsOurs(rank));
  // Three fragments of odd sizes, over a megabyte in all: the copy is split over the threads, and
  // its pieces end inside fragments.
  std::vector<std::vector<uint8_t>> parts = {PayloadOf(rank), PayloadOf(rank + 1),
                                             std::vector<uint8_t>(1 << 20)};
  for (size_t i = 0; i < parts[2].size(); ++i) parts[2][i] = static_cast<uint8_t>(i * 13 + rank);
  std::vector<Buffer> fragments;
  size_t total = 0;
  for (const auto& p : parts) {
    fragments.emplace_back(p.data(), p.size());
    total += p.size();
  }
  const std::vector<uint8_t> mine = routes.Describe(rank + 100, fragments);
  std::vector<uint8_t> theirs(mine.size());
  MPI_Sendrecv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, next, 0, theirs.data(),
               static_cast<int>(theirs.size()), MPI_BYTE, prev, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);

  std::vector<uint8_t> out(total);
  uint64_t token = 0;
  std::string error;
  ASSERT_TRUE(routes.ReadDescribed(
      prev, theirs.data(), theirs.size(), total, [&] { return out.data(); }, &token, &error))
      << error;
  EXPECT_EQ(token, static_cast<uint64_t>(prev + 100));
  std::vector<uint8_t> expected = PayloadOf(prev), second = PayloadOf(prev + 1);
  expected.insert(expected.end(), second.begin(), second.end());
  for (size_t i = 0; i < (1 << 20); ++i) expected.push_back(static_cast<uint8_t>(i * 13 + prev));
  EXPECT_TRUE(out == expected);

  const std::string p = std::to_string(prev);
  EXPECT_FALSE(routes.ReadDescribed(
      prev, theirs.data(), theirs.size(), total + 1, [&] { return out.data(); }, &token, &error));
  EXPECT_EQ(error, "rank " + p + " described a payload of " + std::to_string(total) +
                       " bytes, but its header declares " + std::to_string(total + 1));
  EXPECT_FALSE(routes.ReadDescribed(
      prev, theirs.data(), 12, total, [&] { return out.data(); }, &token, &error));
  EXPECT_EQ(error, "rank " + p + " sent a payload description of 12 bytes");
  EXPECT_EQ(token, 0u);
  // A description of memory the sender does not have: the reader says so, with the token kept
  // so that the payload can still be released.
  std::vector<uint64_t> unmapped = {7, static_cast<uint64_t>(prev), 4096, 100};
  EXPECT_FALSE(routes.ReadDescribed(
      prev, unmapped.data(), unmapped.size() * 8, 100, [&] { return out.data(); }, &token, &error));
  EXPECT_EQ(token, 7u);
  int64_t pid = getpid(), prev_pid = 0;
  MPI_Sendrecv(&pid, 1, MPI_INT64_T, next, 1, &prev_pid, 1, MPI_INT64_T, prev, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  EXPECT_EQ(error, "rank " + p + "'s payload of 100 bytes: reading 100 bytes of process " +
                       std::to_string(prev_pid) + " at 0x1000: Bad address");
  // One that names another rank than the one it came from.
  std::vector<uint64_t> misnamed = {8, static_cast<uint64_t>(rank), 4096, 100};
  EXPECT_FALSE(routes.ReadDescribed(
      prev, misnamed.data(), misnamed.size() * 8, 100, [&] { return out.data(); }, &token, &error));
  EXPECT_EQ(error, "rank " + p + " sent a payload description of rank " + std::to_string(rank));
  MPI_Barrier(MPI_COMM_WORLD);  // every reader is done before the payloads go
}

}  // namespace
}  // namespace pacer
