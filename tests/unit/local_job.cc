#include "local_job.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "ps/session_core.h"
#include "ps/transport/local_transport.h"

namespace pacer {

void RunLocalJob(int servers, int workers, const Config& config,
                 const std::function<void(Session&)>& body) {
  const int size = 1 + servers + workers;
  auto fabric = std::make_shared<LocalTransport::Fabric>(size);
  std::vector<std::string> errors(size);
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
        errors[r] = e.what();
      }
      session.Finalize();
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

}  // namespace pacer
