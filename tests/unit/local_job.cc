#include "local_job.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ps/session_core.h"
#include "ps/transport/local_transport.h"

namespace pacer {
namespace {

// Once a rank's body failed, how long the others may take to end. A rank that failed never
// reaches the barriers the others wait in, and the finalizing barrier has no deadline: without
// this the test would hang instead of failing.
constexpr std::chrono::seconds kGraceAfterFailure(10);

}  // namespace

void RunLocalJob(int servers, int workers, const Config& config,
                 const std::function<void(Session&)>& body) {
  const int size = 1 + servers + workers;
  auto fabric = std::make_shared<LocalTransport::Fabric>(size);
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::string> errors(size);
  int finished = 0;
  bool failed = false;
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      Config c = config;
      c.servers = servers;
      Session session(std::make_unique<SessionCore>(c, std::make_unique<LocalTransport>(fabric, r),
                                                    /*finalize_mpi=*/false));
      try {
        body(session);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        errors[r] = e.what();
        failed = true;
        changed.notify_all();
      }
      session.Finalize();
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      changed.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait(lock, [&] { return failed || finished == size; });
    if (!changed.wait_for(lock, kGraceAfterFailure, [&] { return finished == size; })) {
      for (int r = 0; r < size; ++r) {
        if (!errors[r].empty()) std::fprintf(stderr, "rank %d failed: %s\n", r, errors[r].c_str());
      }
      std::fprintf(stderr, "the other ranks did not end within %lld s of the failure: stopping\n",
                   static_cast<long long>(kGraceAfterFailure.count()));
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

}  // namespace pacer
