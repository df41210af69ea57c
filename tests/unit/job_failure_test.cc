// A job that failed (it lost a rank) ends every wait of every rank at once with LostRankError,
// naming why: a worker's iteration that waits for a gradient that will never come, the other ranks'
// finalizing barrier, and a later request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../common/in_process_job.h"
#include "pacer/error.h"
#include "pacer/gradient_sync.h"
#include "pacer/parameter_server.h"
#include "ps/bootstrap/local_bootstrap.h"
#include "ps/node/node.h"
#include "session/node_of.h"

namespace pacer {
namespace {

using ::testing::HasSubstr;

class JobFailureTest : public ::testing::TestWithParam<testing::InProcessTransport> {
 protected:
  static constexpr int kRanks = 4;  // scheduler, 1 server, 2 workers

  // Runs the job, every rank a thread that joins on its own (so a failure ends its own Session,
  // not the test): the server serves, the scheduler finalizes, and each worker runs `worker`,
  // then finalizes. Returns what each rank caught, by rank: the first error `worker` recorded in
  // its string, else the LostRankError that ended the rank ("" where none did).
  std::vector<std::string> Run(const std::function<void(Session&, std::string& error)>& worker) {
    auto group = std::make_shared<LocalBootstrap::Group>(kRanks);
    const testing::InProcessTransports transports(GetParam(), kRanks);
    std::vector<std::string> errors(kRanks);
    testing::OnEveryRank(kRanks, [&](int rank) {
      Config config;
      config.timeout_s = 120;  // far longer than ctest waits: only the failure can end the waits
      try {
        Session session(Node::Join(config, std::make_unique<LocalBootstrap>(group, rank),
                                   [&](Bootstrap& b, const Config& settled, Role role) {
                                     return transports.Open(b, settled, role);
                                   }));
        if (session.is_server()) {
          ParameterServer server(session);
          session.Finalize();
          return;
        }
        if (session.is_worker()) worker(session, errors[rank]);
        session.Finalize();
      } catch (const LostRankError& e) {
        if (errors[rank].empty()) errors[rank] = e.what();
      }
    });
    return errors;
  }
};

TEST_P(JobFailureTest, AnAbortEndsEveryWaitOfEveryRank) {
  std::vector<std::string> later(kRanks);
  const std::vector<std::string> errors = Run([&](Session& session, std::string& error) {
    std::vector<float> w(16, 0.f), g(16, 1.f);
    GradientSync sync(session);  // bsp, the default
    sync.Register("w", w.data(), w.size());
    if (session.role_index() == 0) {
      sync.Broadcast();  // worker 1's first iteration pulls the initial values
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // worker 1 waits by then
      NodeOf(session).cluster().Abort(-1, "worker 0 gave up");
      return;
    }
    try {
      sync.BeginIteration();
      sync.PushPull("w", g.data(), w.data());
      sync.EndIteration();  // BSP: waits for worker 0's gradient
    } catch (const LostRankError& e) {
      error = e.what();
    }
    try {
      sync.BeginIteration();
      sync.PushPull("w", g.data(), w.data());
    } catch (const LostRankError& e) {
      later[session.rank()] = e.what();
    }
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_THAT(errors[rank], HasSubstr("worker 0 gave up")) << "rank " << rank;
  }
  EXPECT_THAT(later[3], HasSubstr("worker 0 gave up")) << "a request after the failure";
}

// A barrier that timed out on one rank has counted that rank's arrival, so no later barrier of the
// job would match: the job fails on every rank, naming the barrier, instead of leaving the others
// in a finalizing barrier that never completes.
TEST_P(JobFailureTest, ATimedOutBarrierEndsTheJobOnEveryRank) {
  const std::vector<std::string> errors = Run([](Session& session, std::string& error) {
    if (session.role_index() != 0) return;  // worker 1 never comes
    try {
      session.Barrier(kWorkerGroup, std::chrono::milliseconds(300));
    } catch (const TimeoutError& e) {
      error = e.what();
    }
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_THAT(errors[rank],
                HasSubstr("barrier of group workers (2 nodes) timed out after 300 ms on rank 2"))
        << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, JobFailureTest,
                         ::testing::Values(testing::InProcessTransport::kLocal,
                                           testing::InProcessTransport::kUcxSharedMemory),
                         [](const auto& info) { return testing::NameOf(info.param); });

}  // namespace
}  // namespace pacer
