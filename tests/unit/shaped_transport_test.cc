// Link faults (--inject=link:...): a capped link carries data at its rate, a delayed one adds its
// delay, and other links are untouched.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "../common/in_process_job.h"
#include "pacer/kv_server.h"
#include "pacer/kv_worker.h"

namespace pacer {
namespace {

using Clock = std::chrono::steady_clock;

// A job of one server (the default KVServer) and one worker running `worker` under `inject`.
void RunWithFaults(const std::vector<std::string>& inject,
                   const std::function<void(Session&)>& worker) {
  Config config;
  config.inject = inject;
  testing::RunInProcessJob(1, 1, config, [&](Session& session) {
    if (session.is_server()) {
      KVServer<float> server(session);
      session.Barrier(kAllNodes);
      return;
    }
    if (session.is_worker()) worker(session);
    session.Barrier(kAllNodes);
  });
}

// Seconds the worker takes to push `megabytes` in 1 MB pushes to the one server.
double PushSeconds(const std::vector<std::string>& inject, int megabytes) {
  double seconds = 0;
  RunWithFaults(inject, [&](Session& session) {
    KVWorker<float> kv(session);
    std::vector<float> values(1 << 18, 1.f);  // 1 MiB
    kv.Wait(kv.Push({7}, values));            // warm up the path
    const auto start = Clock::now();
    std::vector<int> pending;
    for (int i = 0; i < megabytes; ++i) pending.push_back(kv.Push({7}, values));
    for (int ts : pending) kv.Wait(ts);
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  });
  return seconds;
}

TEST(ShapedTransportTest, ACappedLinkCarriesDataAtItsRate) {
  const double seconds = PushSeconds({"link:w0->s0:bw=40MiB/s"}, 16);
  const double rate = 16.0 / seconds;  // MiB/s
  EXPECT_NEAR(rate, 40.0, 4.0) << seconds << " s for 16 MiB";
  // The cap applies to its link only: the other direction and other links run free.
  EXPECT_LT(PushSeconds({"link:s0->w0:bw=1MiB/s"}, 16), 0.5 * 16 / 40.0);
}

TEST(ShapedTransportTest, ADelayedLinkAddsItsDelayToEachMessage) {
  RunWithFaults({"link:w0->*:delay=30ms"}, [](Session& session) {
    KVWorker<float> kv(session);
    kv.Wait(kv.Push({1}, {1.f}));
    for (int i = 0; i < 5; ++i) {
      std::vector<float> out;
      const auto start = Clock::now();
      kv.Wait(kv.Pull({1}, &out));
      const double t = std::chrono::duration<double>(Clock::now() - start).count();
      EXPECT_GE(t, 0.030);
      EXPECT_LT(t, 0.045);
    }
  });
}

}  // namespace
}  // namespace pacer
