// Push/pull between processes over the transport given on the command line.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../common/scenarios.h"
#include "mpi_test_config.h"
#include "pacer/kv_server.h"
#include "pacer/kv_worker.h"
#include "pacer/session.h"
#include "ps/node/node.h"
#include "ps/transport/ucx/ucx_transport.h"
#include "session/node_of.h"

namespace pacer {
namespace {

// On a server rank: serves with the default KVServer<float> until the job ends, and says so.
bool ServedAsServer(Session& session) {
  if (!session.is_server()) return false;
  KVServer<float> server(session);
  session.Finalize();
  return true;
}

// The servers are ranks 1..S packed; spread, they are the first S ranks past the scheduler taken
// by their place among their host's ranks, then by the order of the hosts' lowest ranks (one per
// host in turn). Each role's indices follow rank order.
TEST(KVMpiTest, SessionRolesFollowPlacement) {
  const Config& config = MpiTestConfig();
  Session session(config);
  EXPECT_EQ(session.transport_name(), config.transport);
  EXPECT_EQ(session.num_servers(), config.servers);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  // (place among its host's ranks, host's order, rank) for ranks 1..size-1.
  std::vector<std::string> host_order;
  std::vector<std::tuple<int, int, int>> keys;
  std::vector<int> seen_on;
  for (int r = 1; r < size; ++r) {
    const std::string host(&names[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    auto it = std::find(host_order.begin(), host_order.end(), host);
    const int h = static_cast<int>(it - host_order.begin());
    if (it == host_order.end()) {
      host_order.push_back(host);
      seen_on.push_back(0);
    }
    keys.emplace_back(config.server_placement == "pack" ? 0 : seen_on[h]++,
                      config.server_placement == "pack" ? 0 : h, r);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<int> servers;
  for (int i = 0; i < config.servers; ++i) servers.push_back(std::get<2>(keys[i]));
  std::sort(servers.begin(), servers.end());
  const int rank = session.rank();
  const auto at = std::find(servers.begin(), servers.end(), rank);
  if (rank == 0) {
    EXPECT_TRUE(session.is_scheduler());
  } else if (at != servers.end()) {
    EXPECT_TRUE(session.is_server()) << "rank " << rank;
    EXPECT_EQ(session.role_index(), at - servers.begin());
  } else {
    EXPECT_TRUE(session.is_worker()) << "rank " << rank;
    const auto below = std::lower_bound(servers.begin(), servers.end(), rank) - servers.begin();
    EXPECT_EQ(session.role_index(), rank - 1 - below);
  }
  session.Finalize();
}

template <typename T>
void PushPullRounds(int rounds, int max_keys, int max_len, uint64_t seed) {
  Session session(MpiTestConfig());
  testing::RoundsOptions options;
  options.rounds = rounds;
  options.max_keys = max_keys;
  options.max_len = max_len;
  options.seed = seed;
  testing::PushPullRounds<T>(session, options);
  session.Finalize();
}

// Float values, 1 to 2M per key (4 B to 8 MB).
TEST(KVMpiTest, RandomFloatPushPullSumsExactly) { PushPullRounds<float>(12, 12, 2 << 20, 11); }

// Byte values, 1 byte to 8 MB per key; sums wrap modulo 256, exactly.
TEST(KVMpiTest, RandomBytePushPullSumsExactly) { PushPullRounds<uint8_t>(12, 12, 8 << 20, 12); }

// Many small keys per request, spread over every server and request thread.
TEST(KVMpiTest, ManySmallKeysSumExactly) { PushPullRounds<int32_t>(20, 500, 64, 13); }

TEST(KVMpiTest, PullsWithChangingLengthsLandInPlace) {
  Session session(MpiTestConfig());
  testing::PullsWithChangingLengths(session);
  session.Finalize();
}

TEST(KVMpiTest, RequestsBeforeTheServerExistsAreServed) {
  Session session(MpiTestConfig());
  testing::RequestsBeforeServerStarts(session);
  session.Finalize();
}

// Over UCX the thread that waits for a reply receives it (Transport::PollUntil), so a request's
// callback runs on that thread; over MPI the progress thread runs it. The server answers late, so
// the reply surely arrives while the worker waits.
TEST(KVMpiTest, TheWaitingThreadReceivesItsReply) {
  Session session(MpiTestConfig());
  if (session.is_server()) {
    KVServer<float> server(
        session, [](const RequestMeta& meta, const KVRequest<float>&, KVServer<float>* self) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          self->Response(meta);
        });
    session.Finalize();
    return;
  }
  if (session.is_worker()) {
    KVWorker<float> kv(session);
    const std::vector<Key> keys = {Key(session.role_index())};
    const std::vector<float> vals(16, 1.0f);
    std::thread::id ran_on;
    for (int round = 0; round < 3; ++round) {
      kv.Wait(kv.ZPush(keys, vals, {}, 0, [&ran_on] { ran_on = std::this_thread::get_id(); }));
      EXPECT_EQ(ran_on == std::this_thread::get_id(), session.transport_name() == "ucx")
          << "round " << round << " over " << session.transport_name();
    }
  }
  session.Finalize();
}

// Over UCX the progress thread stands aside while a caller waits and drives; a request that
// nobody waits for must still be answered while the caller only sleeps (it would not be if the
// progress thread stood aside for a caller that is gone). Where its callback runs is not checked:
// the thread that finishes a request's last part runs it, and that is the posting thread when its
// send completes at once but is preempted before it notes so, after the answer came.
TEST(KVMpiTest, ARequestNobodyWaitsForCompletes) {
  Session session(MpiTestConfig());
  if (ServedAsServer(session)) return;
  if (session.is_worker()) {
    KVWorker<float> kv(session);
    const std::vector<Key> keys = {Key(session.role_index())};
    const std::vector<float> vals(16, 1.0f);
    for (int round = 0; round < 3; ++round) {
      // Shared: on a failed round the callback may still run after this scope ends.
      auto done = std::make_shared<std::atomic<bool>>(false);
      const int ts = kv.ZPush(keys, vals, {}, 0, [done] { done->store(true); });
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!done->load() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      ASSERT_TRUE(done->load()) << "round " << round << " over " << session.transport_name()
                                << ": no answer in 10 s without a Wait";
      kv.Wait(ts);
    }
  }
  session.Finalize();
}

// Values pushed from Session::AllocatePushMemory are summed where they lie by servers on this host
// (over UCX, from the worker's shared memory): the sums are exact, and writing the memory again
// once a push's Wait returned changes nothing already pushed.
TEST(KVMpiTest, PushesFromPushMemorySumExactly) {
  Session session(MpiTestConfig());
  if (ServedAsServer(session)) return;
  if (session.is_worker()) {
    if (session.transport_name() == "ucx" && MpiTestConfig().tuning.shm_ring_bytes > 0 &&
        UcxTlsAllowsSharedMemory(std::getenv("UCX_TLS"))) {
      EXPECT_NE(NodeOf(session).transport().LendSharedMemory(64), nullptr)
          << "UCX on one host lends shared memory";
    }
    KVWorker<float> kv(session);
    const int me = session.role_index();
    constexpr size_t kKeys = 8, kLen = 65536;  // 256 KiB per key: past the rendezvous threshold
    std::vector<Key> keys;
    for (size_t i = 0; i < kKeys; ++i) keys.push_back(Key(100000 * (me + 1) + i));
    std::shared_ptr<void> memory = session.AllocatePushMemory(kKeys * kLen * sizeof(float));
    float* grads = static_cast<float*>(memory.get());
    for (int round = 1; round <= 4; ++round) {
      for (size_t j = 0; j < kKeys * kLen; ++j) grads[j] = float(round * (me + 1) + j % 7);
      kv.Wait(kv.ZPush(keys, Span<const float>(grads, kKeys * kLen)));
      std::fill_n(grads, kKeys * kLen, -1e9f);  // the next iteration's gradients
    }
    std::vector<float> out;
    kv.Wait(kv.Pull(keys, &out));
    ASSERT_EQ(out.size(), kKeys * kLen);
    for (size_t j = 0; j < out.size(); ++j) {
      ASSERT_EQ(out[j], float(10 * (me + 1) + 4 * (j % 7))) << "value " << j << " of worker " << me;
    }
  }
  session.Finalize();
}

// Over TCP alone a worker streams its large pushes in pieces, and the server sums a push into
// its store as the pieces arrive, where it can (keys already stored, all on one shard, that shard
// idle); else the usual way. Either way every sum is exact: keys of 100003 values (pieces cross
// their ends), pushed alone and together, and one key every worker pushes.
TEST(KVMpiTest, StreamedPushesSumExactly) {
  Session session(MpiTestConfig());
  const bool streams = session.transport_name() == "ucx" &&
                       MpiTestConfig().tuning.stream_piece_bytes != 0 &&
                       !UcxTlsAllowsSharedMemory(std::getenv("UCX_TLS"));
  if (session.is_server()) {
    KVServer<float> server(session);
    session.Finalize();
    if (streams) {
      EXPECT_GT(server.pushes_summed_in_place(), 0) << "server rank " << session.rank();
    } else {
      EXPECT_EQ(server.pushes_summed_in_place(), 0) << "server rank " << session.rank();
    }
    return;
  }
  if (session.is_worker()) {
    KVWorker<float> kv(session);
    const int me = session.role_index();
    const int workers = session.num_workers();
    constexpr size_t kKeys = 4, kLen = 100003;
    std::vector<Key> keys;
    for (size_t i = 0; i < kKeys; ++i) keys.push_back(Key(200000 * (me + 1) + 7 * i));
    const Key shared = 7777777;
    constexpr int kRounds = 6;
    std::vector<float> values(kKeys * kLen);
    for (int round = 1; round <= kRounds; ++round) {
      for (size_t j = 0; j < values.size(); ++j) values[j] = float(round + me + int(j % 5));
      if (round % 2 == 1) {
        kv.Wait(kv.Push(keys, values));
      } else {
        for (size_t i = 0; i < kKeys; ++i) {
          std::vector<float> one(values.begin() + i * kLen, values.begin() + (i + 1) * kLen);
          kv.Wait(kv.Push({keys[i]}, one));
        }
      }
      kv.Wait(kv.Push({shared}, std::vector<float>(kLen, float(round))));
    }
    session.Barrier(kWorkerGroup);
    std::vector<float> out;
    kv.Wait(kv.Pull(keys, &out));
    ASSERT_EQ(out.size(), kKeys * kLen);
    const int rounds_sum = kRounds * (kRounds + 1) / 2;
    for (size_t j = 0; j < out.size(); ++j) {
      ASSERT_EQ(out[j], float(rounds_sum + kRounds * (me + int(j % 5))))
          << "value " << j << " of worker " << me;
    }
    kv.Wait(kv.Pull({shared}, &out));
    ASSERT_EQ(out.size(), kLen);
    for (size_t j = 0; j < kLen; ++j) {
      ASSERT_EQ(out[j], float(workers * rounds_sum)) << "value " << j << " of the shared key";
    }
  }
  session.Finalize();
}

}  // namespace
}  // namespace pacer
