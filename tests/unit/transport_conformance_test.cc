// The transport conformance checks (tests/common/transport_conformance.h) over the transports that
// run in one process, every rank a thread: LocalTransport, and UcxTransport over shared memory
// (the ring, described payloads, UCX's rendezvous for what the ring cannot take), over shared
// memory without the ring or described payloads (UCX's rendezvous alone), and over TCP on
// loopback (streamed pieces, and UCX's rendezvous from the rank that reads).
#include "../common/transport_conformance.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "../common/in_process_job.h"
#include "ps/bootstrap/local_bootstrap.h"

namespace pacer {
namespace {

using testing::InProcessTransport;

struct Variant {
  const char* name;
  InProcessTransport transport;
  bool shared_memory_paths = true;  // the ring and described payloads, where the transport has them
};

const Variant kVariants[] = {
    {"local", InProcessTransport::kLocal},
    {"ucx_shared_memory", InProcessTransport::kUcxSharedMemory},
    {"ucx_rendezvous", InProcessTransport::kUcxSharedMemory, false},
    {"ucx_tcp", InProcessTransport::kUcxTcp},
};

class TransportConformanceTest
    : public ::testing::TestWithParam<std::tuple<Variant, testing::ConformanceCheck>> {};

// Three ranks, as a scheduler, a server and a worker would be: rank 1 lets its receivers read
// its large payloads, the others write theirs.
TEST_P(TransportConformanceTest, Passes) {
  const auto& [variant, check] = GetParam();
  constexpr int kRanks = 3;
  Config config;
  config.tuning = testing::ConformanceTuning();
  if (!variant.shared_memory_paths) {
    config.tuning.shm_ring_bytes = 0;
    config.tuning.read_threads = 0;
  }
  auto group = std::make_shared<LocalBootstrap::Group>(kRanks);
  const testing::InProcessTransports transports(variant.transport, kRanks);
  testing::OnEveryRank(kRanks, [&](int r) {
    LocalBootstrap bootstrap(group, r);
    const Role role = r == 1 ? Role::kServer : Role::kWorker;
    try {
      std::unique_ptr<Transport> transport = transports.Open(bootstrap, config, role);
      check.run(*transport, bootstrap);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << r << ": " << e.what();
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, TransportConformanceTest,
                         ::testing::Combine(::testing::ValuesIn(kVariants),
                                            ::testing::ValuesIn(testing::ConformanceChecks())),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::get<1>(info.param).name;
                         });

}  // namespace
}  // namespace pacer
