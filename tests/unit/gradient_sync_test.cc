// GradientSync and the ParameterServer with every rank a thread: every mode trains (over
// LocalTransport and over UcxTransport), mode switches lose nothing, and the API's misuse gets
// clear errors.
#include "pacer/gradient_sync.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <tuple>

#include "../common/in_process_job.h"
#include "../common/training.h"
#include "pacer/error.h"
#include "pacer/kv_worker.h"
#include "pacer/parameter_server.h"
#include "pacer/sync_control.h"
#include "worker/tensor_layout.h"

namespace pacer {
namespace {

// Gathers the workers' vectors for one job of threads.
class LocalGather {
 public:
  explicit LocalGather(int workers) : parts_(workers) {}
  std::vector<double> operator()(int worker, const std::vector<double>& mine) {
    std::unique_lock<std::mutex> lock(mu_);
    const int generation = generation_;
    parts_[worker] = mine;
    if (++arrived_ == static_cast<int>(parts_.size())) {
      all_.clear();
      for (const auto& p : parts_) all_.insert(all_.end(), p.begin(), p.end());
      arrived_ = 0;
      ++generation_;
      done_.notify_all();
    } else {
      done_.wait(lock, [&] { return generation_ != generation; });
    }
    return all_;
  }

 private:
  std::mutex mu_;
  std::condition_variable done_;
  std::vector<std::vector<double>> parts_;
  std::vector<double> all_;
  int arrived_ = 0, generation_ = 0;
};

void TrainInProcess(const testing::TrainingCase& c, int servers, int workers,
                    testing::InProcessTransport transport = testing::InProcessTransport::kLocal) {
  const Config config = testing::TrainingConfig(Config(), c);
  LocalGather gather(workers);
  std::mutex mu;
  std::map<Key, std::vector<int>> owners;  // key -> the servers that hold it at the end
  testing::RunInProcessJob(
      servers, workers, config,
      [&](Session& session) {
        testing::TrainSoftmax(
            session, c.options,
            [&](const std::vector<double>& mine) { return gather(session.role_index(), mine); },
            [&](int server, const std::vector<Key>& keys) {
              std::lock_guard<std::mutex> lock(mu);
              for (Key key : keys) owners[key].push_back(server);
            });
      },
      transport);
  // The model's weights lie on 4 keys (64-byte partitions), the biases and counter on one; the
  // task counters take many more.
  if (c.options.tasks_per_worker == 0) {
    EXPECT_EQ(owners.size(), 5u);
  }
  for (const auto& [key, held_by] : owners) {
    EXPECT_EQ(held_by.size(), 1u) << "key " << key << " is held by " << held_by.size()
                                  << " servers";
  }
}

class GradientSyncTrainingTest
    : public ::testing::TestWithParam<
          std::tuple<testing::TrainingCase, testing::InProcessTransport>> {};

TEST_P(GradientSyncTrainingTest, InProcess) {
  const auto& [c, transport] = GetParam();
  TrainInProcess(c, 2, c.options.switch_to.empty() ? 3 : 2, transport);
}

INSTANTIATE_TEST_SUITE_P(
    Softmax, GradientSyncTrainingTest,
    ::testing::Combine(::testing::ValuesIn(testing::TrainingCases()),
                       ::testing::Values(testing::InProcessTransport::kLocal,
                                         testing::InProcessTransport::kUcxSharedMemory,
                                         testing::InProcessTransport::kUcxTcp)),
    [](const auto& info) {
      return std::get<0>(info.param).name + "_" + testing::NameOf(std::get<1>(info.param));
    });

// A redirect storm: ranges move back to back while 4 workers train on 3 servers, so requests meet
// redirects and held ranges all the time. Nothing deadlocks; every key applies every gradient
// once (checked by the servers) and has one owner at the end.
TEST(MigrationStormTest, LosesNoUpdate) {
  for (const char* mode : {"bsp", "asp"}) {
    testing::TrainingCase storm{"storm", mode, {}};
    storm.options.iterations = 80;
    storm.options.migrations = 100;
    storm.options.migrate_gap_ms = 0;
    storm.options.check_reference = std::string(mode) == "bsp";
    TrainInProcess(storm, 3, 4);
  }
}

TEST(GradientSyncTest, MisuseGetsClearErrors) {
  Config config;
  config.partition_bytes = 16;
  testing::RunInProcessJob(1, 1, config, [](Session& session) {
    if (session.is_server()) return testing::ServeUntilBarriers(session);
    if (!session.is_worker()) {  // the scheduler
      SyncControl control(session);
      EXPECT_THROW(control.Switch(SyncMode::Parse("backup:1")), Error);  // 1 worker: none left
      session.Barrier(kAllNodes);
      return;
    }
    std::vector<float> a(2), b(2), big(9), grad(9);
    GradientSync sync(session);
    sync.Register("a", a.data(), a.size());
    sync.Register("b", b.data(), b.size());  // grouped with a
    sync.Register("big", big.data(), big.size());
    EXPECT_THROW(sync.Register("a", a.data(), 2), Error);
    EXPECT_THROW(sync.PushPull("a", grad.data(), a.data()), Error);  // before BeginIteration
    sync.BeginIteration(4);
    EXPECT_THROW(sync.Register("late", a.data(), 2), Error);
    EXPECT_THROW(sync.PushPull("nope", grad.data(), a.data()), Error);
    int h = sync.PushPull("a", grad.data(), a.data());
    EXPECT_THROW(sync.PushPull("a", grad.data(), a.data()), Error);
    try {
      sync.Wait(h);
      ADD_FAILURE() << "waited for a key whose other tensor was not pushed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'b'"), std::string::npos) << e.what();
    }
    sync.PushPull("b", grad.data(), b.data());
    sync.Wait(sync.PushPull("big", grad.data(), big.data()));
    sync.EndIteration();
    EXPECT_EQ(sync.clock(), 1);
    EXPECT_EQ(sync.last_iteration().bytes_out, static_cast<int64_t>(13 * sizeof(float)));
    EXPECT_THROW(sync.Wait(12345), Error);
    // A peer that bypasses GradientSync: the server names the key and sizes, loses nothing.
    KVWorker<float> raw(session);
    try {
      raw.Wait(raw.Push({0}, {1.f, 2.f, 3.f}));
      ADD_FAILURE() << "a push of the wrong length was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("key 0: worker 0 pushed 12 bytes, the key holds 4"),
                std::string::npos)
          << e.what();
    }
    std::vector<float> grads(13, 1.f);
    sync.BeginIteration(4);
    sync.PushPull("a", grads.data(), a.data());
    sync.PushPull("b", grads.data(), b.data());
    sync.PushPull("big", grads.data(), big.data());
    sync.EndIteration();
    EXPECT_EQ(a, (std::vector<float>{-0.01f, -0.01f}));  // lr 0.01: a step of 0, then of 1
    session.Barrier(kAllNodes);
  });
}

TEST(TensorLayoutTest, SplitsLargeTensorsAndGroupsSmallNeighbours) {
  TensorLayout layout(10);
  layout.Add("a", 3);
  layout.Add("b", 4);
  layout.Add("c", 4);     // would overflow a+b's key: a new group
  layout.Add("big", 25);  // 10 + 10 + 5, and closes the group
  layout.Add("d", 1);
  ASSERT_EQ(layout.units().size(), 6u);
  EXPECT_EQ(layout.units()[0].count, 7u);
  EXPECT_EQ(layout.units()[0].members.size(), 2u);
  EXPECT_EQ(layout.units()[0].members[1].unit_offset, 3u);
  EXPECT_EQ(layout.units()[1].count, 4u);
  EXPECT_EQ(layout.tensors()[3].units, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(layout.units()[4].members[0].tensor_offset, 20u);
  EXPECT_EQ(layout.units()[4].count, 5u);
  EXPECT_EQ(layout.units()[5].members[0].tensor, 4);
  for (size_t u = 0; u < layout.units().size(); ++u) EXPECT_EQ(layout.units()[u].key, u);
  EXPECT_THROW(layout.Add("a", 1), Error);
  EXPECT_THROW(layout.Add("e", 0), Error);
  EXPECT_THROW(layout.Find("zz"), Error);
}

}  // namespace
}  // namespace pacer
