// The checks a job makes before any message is sent: every option against what it allows and
// against the job's nodes, and the ranks' agreement, which ends every rank when one rank's
// configuration is bad or differs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../common/in_process_job.h"
#include "pacer/error.h"
#include "ps/bootstrap/local_bootstrap.h"
#include "ps/node/job_settings.h"
#include "ps/node/node.h"

namespace pacer {
namespace {

using ::testing::HasSubstr;

struct BadOption {
  std::function<void(Config&)> set;
  std::string message;
};

TEST(JobSettingsTest, EachBadOptionIsNamedWithWhatIsExpected) {
  const std::vector<BadOption> cases = {
      {[](Config& c) { c.sync = "ssp:x"; }, "--sync=ssp:x: 'x' is not an integer >= 0"},
      {[](Config& c) { c.optimizer = "adam:lr=abc"; }, "--optimizer=adam:lr=abc: lr=abc"},
      {[](Config& c) { c.transport = "ib"; }, "--transport=ib: expected auto, ucx or mpi"},
      {[](Config& c) { c.reduce_device = "tpu"; }, "--reduce_device=tpu: expected cpu or cuda"},
      {[](Config& c) { c.balance = "greedy"; }, "--balance=greedy: expected none or sas"},
      {[](Config& c) { c.on_worker_loss = "pray"; },
       "--on_worker_loss=pray: expected abort or continue"},
      {[](Config& c) { c.partition_bytes = 0; }, "--partition_bytes=0: expected > 0"},
      {[](Config& c) { c.timeout_s = -1; }, "--timeout_s=-1: expected > 0"},
      {[](Config& c) { c.heartbeat_timeout_s = 0; }, "--heartbeat_timeout_s=0: expected > 0"},
      {[](Config& c) { c.detect_window = 0; }, "--detect_window=0: expected > 0"},
      {[](Config& c) { c.straggler_ratio = 0.5; }, "--straggler_ratio=0.5: expected >= 1"},
      {[](Config& c) { c.tuning.max_message_bytes = -4; }, "--max_message_bytes=-4: expected >= 0"},
      {[](Config& c) { c.server_bandwidth = "1GB/s,2GB/s"; },
       "--server_bandwidth=1GB/s,2GB/s: 2 rates for 1 servers"},
      {[](Config& c) { c.sync = "backup:2"; },
       "--sync=backup:2: backup:2: 2 backup workers leave none of the 2 workers to wait for"},
      {[](Config& c) { c.sync = "groups:1:0/2"; },
       "--sync=groups:1:0/2: groups:1:0/2: worker 2 is not among the job's 2 workers"},
      {[](Config& c) { c.sync = "groups:1:0"; }, "worker 1 of 2 is in no group"},
      {[](Config& c) { c.inject = {"worker:x:compute=3x"}; },
       "--inject=worker:x:compute=3x: 'x' is not a role index"},
      {[](Config& c) { c.inject = {"worker:2:compute=3x"}; },
       "--inject=worker:2:compute=3x: names worker 2, but the job has 2 workers (0..1)"},
      {[](Config& c) { c.inject = {"server:1:service=2x"}; },
       "--inject=server:1:service=2x: names server 1, but the job has 1 server (0..0)"},
      {[](Config& c) { c.inject = {"link:4->0:delay=1ms"}; },
       "--inject=link:4->0:delay=1ms: names rank 4, but the job has 4 ranks (0..3)"},
      {[](Config& c) { c.inject = {"link:w0->s1:delay=1ms"}; },
       "--inject=link:w0->s1:delay=1ms: names server 1, but the job has 1 server (0..0)"},
  };
  const Roles roles(4, 1);
  for (const BadOption& bad : cases) {
    Config config;
    bad.set(config);
    try {
      JobSettings::Check(config, roles);
      ADD_FAILURE() << "accepted: " << bad.message;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(bad.message));
    }
  }
  Config good;
  good.inject = {"worker:1:compute=3x", "server:0:service=2x", "link:w1->s0:delay=1ms",
                 "link:3->*:bw=1GB/s", "worker:*:compute=2x@p=0.5"};
  EXPECT_EQ(JobSettings::Check(good, roles).faults.size(), 5u);
}

// Joins a job of 4 ranks (1 server), each with the configuration `configure` makes for it;
// returns what each rank's Join threw.
std::vector<std::string> JoinAll(const std::function<void(int rank, Config&)>& configure) {
  auto group = std::make_shared<LocalBootstrap::Group>(4);
  const testing::InProcessTransports transports(testing::InProcessTransport::kLocal, 4);
  std::vector<std::string> errors(4);
  testing::OnEveryRank(4, [&](int rank) {
    Config config;
    config.timeout_s = 60;
    configure(rank, config);
    try {
      auto node = Node::Join(config, std::make_unique<LocalBootstrap>(group, rank),
                             [&](Bootstrap& b, const Config& settled, Role role) {
                               return transports.Open(b, settled, role);
                             });
      node->Finalize();
    } catch (const Error& e) {
      errors[rank] = e.what();
    }
  });
  return errors;
}

TEST(ConfigurationAgreementTest, OneRanksBadOptionStopsEveryRank) {
  const std::vector<std::string> errors = JoinAll([](int rank, Config& c) {
    if (rank == 3) c.sync = "ssp:x";
  });
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_THAT(errors[rank], HasSubstr("rank 3: --sync=ssp:x: 'x' is not an integer >= 0"))
        << "rank " << rank;
  }
}

TEST(ConfigurationAgreementTest, AnOptionThatDiffersStopsEveryRank) {
  const std::vector<std::string> errors = JoinAll([](int rank, Config& c) {
    if (rank == 2) c.optimizer = "sgd:lr=0.5";
  });
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_THAT(errors[rank], HasSubstr("--optimizer differs between ranks: rank 0 has "
                                        "'sgd:lr=0.01', rank 2 has 'sgd:lr=0.5'"))
        << "rank " << rank;
  }
}

TEST(ConfigurationAgreementTest, AgreeingRanksJoin) {
  const std::vector<std::string> errors = JoinAll([](int rank, Config& c) {
    c.reduce_threads = rank + 1;  // a rank's own option may differ
  });
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(errors[rank], "") << "rank " << rank;
}

}  // namespace
}  // namespace pacer
