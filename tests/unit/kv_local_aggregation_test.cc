// A worker's local aggregation (PushSum) and the servers' sums, both through the session's
// Reducer, in jobs whose ranks run as threads.
#include <gtest/gtest.h>

#include <string>

#include "../common/in_process_job.h"
#include "pacer/kv_server.h"
#include "pacer/kv_worker.h"

namespace pacer {
namespace {

class LocalAggregationTest : public ::testing::TestWithParam<std::string> {};

// Worker w's local buffer b holds (w + 1) * (b + 1) + i % 7 at element i: small integers, so
// every sum is exact in float and any lost or doubled buffer shows.
TEST_P(LocalAggregationTest, PushSumOfLocalBuffersReachesTheServersExactly) {
  Config config;
  config.timeout_s = 60;
  config.reduce_device = GetParam();  // "cuda" takes the CPU here when no device answers
  constexpr int kWorkers = 2, kLocal = 3;
  const std::vector<Key> keys = {3, 1000, 77777};
  const std::vector<int> lens = {5, 200003, 1};  // the large key spans reducer threads
  size_t total = 0;
  for (int l : lens) total += l;
  testing::RunInProcessJob(2, kWorkers, config, [&](Session& session) {
    if (session.is_server()) {
      KVServer<float> server(session);
      session.Finalize();
      return;
    }
    if (!session.is_worker()) return;
    KVWorker<float> kv(session);
    const int w = session.role_index();
    std::vector<std::vector<float>> local(kLocal, std::vector<float>(total));
    std::vector<Span<const float>> views;
    for (int b = 0; b < kLocal; ++b) {
      for (size_t i = 0; i < total; ++i) local[b][i] = float((w + 1) * (b + 1) + i % 7);
      views.emplace_back(local[b].data(), total);
    }
    kv.Wait(kv.PushSum(keys, views, lens));
    session.Barrier(kWorkerGroup);
    std::vector<float> out;
    kv.Wait(kv.Pull(keys, &out));
    ASSERT_EQ(out.size(), total);
    // Sum over workers and buffers: (1 + 2) * (1 + 2 + 3) + 6 * (i % 7).
    for (size_t i = 0; i < total; ++i) {
      ASSERT_EQ(out[i], float(18 + kWorkers * kLocal * (i % 7))) << "element " << i;
    }
    views[1] = Span<const float>(local[1].data(), total - 1);
    try {
      kv.PushSum(keys, views, lens);
      ADD_FAILURE() << "a shorter local buffer was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("local buffer 1 holds " + std::to_string(total - 1)),
                std::string::npos)
          << e.what();
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Devices, LocalAggregationTest, ::testing::Values("cpu", "cuda"));

}  // namespace
}  // namespace pacer
