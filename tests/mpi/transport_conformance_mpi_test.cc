// The transport conformance checks (tests/common/transport_conformance.h) with every rank a
// process, over the transport the job names (--transport mpi or ucx; UCX_TLS picks shared memory
// or TCP).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "../common/transport_conformance.h"
#include "mpi_test_config.h"
#include "ps/bootstrap/mpi_bootstrap.h"
#include "ps/cluster/roles.h"
#include "ps/transport/mpi_transport.h"
#include "ps/transport/ucx/ucx_transport.h"

namespace pacer {
namespace {

class TransportConformanceMpiTest : public ::testing::TestWithParam<testing::ConformanceCheck> {};

TEST_P(TransportConformanceMpiTest, Passes) {
  const Config& config = MpiTestConfig();
  MpiBootstrap bootstrap;
  const TransportTuning tuning = testing::ConformanceTuning();
  std::unique_ptr<Transport> transport;
  if (config.transport == "mpi") {
    transport =
        std::make_unique<MpiTransport>(bootstrap.DuplicateCommunicator(), tuning, config.timeout_s);
  } else {
    UcxTransport::Options options;
    options.tuning = tuning;
    options.timeout_s = config.timeout_s;
    const Roles roles(bootstrap.size(), config.servers);
    options.rendezvous = UcxTransport::RendezvousFor(roles.RoleOf(bootstrap.rank()));
    transport = std::make_unique<UcxTransport>(bootstrap, options);
  }
  GetParam().run(*transport, bootstrap);
}

INSTANTIATE_TEST_SUITE_P(Checks, TransportConformanceMpiTest,
                         ::testing::ValuesIn(testing::ConformanceChecks()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace pacer
