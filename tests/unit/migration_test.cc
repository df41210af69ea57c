// Key-range migration (SAS) with every rank a thread: bad orders are refused with clear errors and
// the job goes on; a storm of migrations during training loses and doubles nothing.
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "../common/error_of.h"
#include "../common/in_process_job.h"
#include "pacer/error.h"
#include "pacer/gradient_sync.h"
#include "pacer/migration_control.h"
#include "pacer/parameter_server.h"
#include "ps/node/node.h"
#include "ps/routing/router.h"
#include "session/node_of.h"

namespace pacer {
namespace {

// A MIGRATE order sent by a rank that is not the scheduler; returns the server's answer.
std::string MigrateFromWorker(Session& session, int range) {
  std::promise<std::string> answer;
  Node& node = NodeOf(session);
  const int client =
      node.dispatcher().AttachClient([&](Message&& msg) { answer.set_value(msg.meta.error()); });
  Message order;
  order.meta.set_command(proto::MIGRATE);
  order.meta.set_sender(session.rank());
  order.meta.set_client_id(client);
  order.meta.set_range(range);
  order.meta.set_target(1);
  node.transport().Send(node.roles().ServerRank(0), order, nullptr);
  std::string error = answer.get_future().get();
  node.dispatcher().DetachClient(client);
  return error;
}

TEST(MigrationTest, BadOrdersAreRefusedAndTheJobGoesOn) {
  Config config;
  config.servers = 2;
  config.optimizer = "sgd:lr=0.5";
  testing::RunInProcessJob(2, 1, config, [](Session& session) {
    const int scheduler_and_worker = kSchedulerGroup | kWorkerGroup;
    if (session.is_server()) return testing::ServeUntilBarriers(session);
    if (!session.is_worker()) {
      MigrationControl control(session);
      session.Barrier(scheduler_and_worker);  // the worker has registered its tensor
      const int range = control.RangeOf(0);
      const int owner = control.OwnerOf(range);
      EXPECT_EQ(testing::ErrorOf([&] { control.MoveRange(999, 0); }),
                "range 999 does not exist: the table has ranges 0..31");
      EXPECT_EQ(testing::ErrorOf([&] { control.MoveRange(range, 5); }),
                "server 5 does not exist: the job has servers 0..1");
      EXPECT_EQ(testing::ErrorOf([&] { control.MoveRange(range, owner); }),
                "range " + std::to_string(range) + " belongs to server " + std::to_string(owner) +
                    " already");
      EXPECT_EQ(control.OwnerOf(range), owner);  // refused orders change nothing
      const MigrationControl::Move move = control.MoveRange(range, 1 - owner);
      EXPECT_EQ(move.epoch, 1);
      EXPECT_GT(move.bytes, 0) << "key 0's state moved";
      session.Barrier(scheduler_and_worker);  // moved: the worker trains on
      session.Barrier(kAllNodes);
      return;
    }
    std::vector<float> w(4, 1.f), grad(4, 1.f);
    GradientSync sync(session);
    sync.Register("w", w.data(), w.size());
    sync.BeginIteration(1);
    sync.PushPull("w", grad.data(), w.data());
    sync.EndIteration();
    // A worker is not the scheduler: its order is refused, with the reason.
    const std::string refused = MigrateFromWorker(session, 0);
    EXPECT_NE(refused.find("only the scheduler (rank 0) moves key ranges, not rank 3"),
              std::string::npos)
        << refused;
    session.Barrier(kSchedulerGroup | kWorkerGroup);
    session.Barrier(kSchedulerGroup | kWorkerGroup);
    for (int i = 0; i < 3; ++i) {
      sync.BeginIteration(1);
      sync.PushPull("w", grad.data(), w.data());
      sync.EndIteration();
    }
    // Four steps of 0.5: nothing lost or doubled across the move.
    EXPECT_EQ(w, std::vector<float>(4, -1.f));
    session.Barrier(kAllNodes);
  });
}

// Pushes queued on the owner when its range is ordered away are applied there first: the export
// runs ahead of the owner's queue but serves the range's queued requests before it leaves. The
// owner serves 20 MB/s (an emulated capacity), so the four workers' 1 MB pushes are still queued
// when the order comes.
TEST(MigrationTest, QueuedPushesOfAMovingRangeAreAppliedBeforeItLeaves) {
  constexpr int kWorkers = 4;
  constexpr size_t kFloats = 1 << 18;  // 1 MB: one key
  Config config;
  config.servers = 2;
  config.sync = "asp";
  config.optimizer = "sgd:lr=1";
  config.inject = {"server:0:rate=20MB/s"};
  config.timeout_s = 20;  // a lost push fails the test in seconds
  const int scheduler_and_workers = kSchedulerGroup | kWorkerGroup;
  testing::RunInProcessJob(2, kWorkers, config, [&](Session& session) {
    if (session.is_server()) {
      ParameterServer server(session);
      session.Barrier(kAllNodes);
      if (NodeOf(session).routing().current()->ServerOf(0) == session.role_index()) {
        const ParameterServer::KeyStats stats = server.Keys().at(0);
        EXPECT_EQ(stats.applied, kWorkers) << "on the new owner, server " << session.rank() - 1;
      }
      session.Barrier(kAllNodes);
      return;
    }
    if (!session.is_worker()) {
      MigrationControl control(session);
      const int range = control.RangeOf(0);
      EXPECT_EQ(control.OwnerOf(range), 0) << "the test wants key 0 on the slow server";
      session.Barrier(scheduler_and_workers);  // the pushes are queued on server 0
      control.MoveRange(range, 1);
      session.Barrier(kAllNodes);
      session.Barrier(kAllNodes);
      return;
    }
    std::vector<float> w(kFloats, 1.f), grad(kFloats, 1.f);
    GradientSync sync(session);
    sync.Register("w", w.data(), w.size());
    sync.BeginIteration(1);
    sync.PushPull("w", grad.data(), w.data());
    session.Barrier(scheduler_and_workers);
    sync.EndIteration();
    session.Barrier(kWorkerGroup);
    sync.Fetch();
    EXPECT_EQ(w, std::vector<float>(kFloats, 1.f - kWorkers));  // each push applied once
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
  });
}

}  // namespace
}  // namespace pacer
