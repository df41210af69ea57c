// Checkpoint and resume (GradientSync::Checkpoint, Resume) with every rank a thread: a job stopped
// at a checkpoint and resumed in a new job ends with the parameters of an uninterrupted run, the
// servers' momentum included; a checkpoint of other tensors is refused by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "../common/in_process_job.h"
#include "../common/training.h"
#include "pacer/error.h"
#include "pacer/gradient_sync.h"
#include "softmax_regression.h"
#include "task_gradients.h"

namespace pacer {
namespace {

using examples::Dataset;
using examples::SoftmaxRegression;

constexpr int kWorkers = 3, kBatch = 32, kTasks = 4;
constexpr int64_t kIterations = 30;

// One job: from worker 0's initial values or a checkpoint, until a clock, then a checkpoint if
// asked.
struct Segment {
  std::string resume_from;
  int64_t until = kIterations;
  std::string checkpoint_to;
  int workers = kWorkers;
  int features = 16;
  std::string* resume_error = nullptr;  // set: a failed Resume ends the job, its error here
};

Config CheckpointConfig(const std::string& mode) {
  Config config;
  config.sync = mode;
  config.optimizer = "sgd:lr=0.1,momentum=0.9";  // state that lives on the servers only
  config.partition_bytes = 64;                   // the weights over several keys
  config.timeout_s = 60;
  return config;
}

// Softmax regression on clustered data (with tasks unless BSP); returns worker 0's parameters,
// weights then biases, at the segment's end.
std::vector<float> Train(const std::string& mode, const Segment& segment) {
  const int workers = segment.workers;
  const Dataset data = examples::MakeClusters(2048, segment.features, 4, /*seed=*/3);
  const SoftmaxRegression model(data.features, data.classes);
  const bool tasks = mode != "bsp";
  std::vector<float> result;
  std::mutex mu;
  testing::RunInProcessJob(2, workers, CheckpointConfig(mode), [&](Session& session) {
    if (session.is_server()) return testing::ServeUntilBarriers(session);
    if (session.is_worker()) {
      const int me = session.role_index();
      std::vector<float> w(model.weights_size()), b(model.biases_size());
      std::vector<float> gw(w.size()), gb(b.size());
      std::mt19937 rng(me);  // worker 0's values must win, or the checkpoint's
      std::normal_distribution<float> normal(0.f, 0.1f);
      for (float& v : w) v = normal(rng);
      GradientSync sync(session);
      sync.Register("weights", w.data(), w.size());
      sync.Register("biases", b.data(), b.size());
      if (tasks) sync.UseTasks(kTasks);
      try {
        if (!segment.resume_from.empty()) sync.Resume(segment.resume_from);
      } catch (const Error& e) {
        if (segment.resume_error == nullptr) throw;
        *segment.resume_error = e.what();
        session.Barrier(kAllNodes);
        return;
      }
      while (sync.clock() < segment.until) {
        sync.BeginIteration(kBatch);
        if (tasks) {
          examples::TaskGradients(sync, data, model, workers, kTasks, kBatch, w, b, gw, gb,
                                  nullptr);
        } else {
          model.Loss(data, examples::MinibatchRows(data.size(), workers, me, sync.clock(), kBatch),
                     w.data(), b.data(), gw.data(), gb.data());
        }
        sync.PushPull("weights", gw.data(), w.data());
        sync.PushPull("biases", gb.data(), b.data());
        sync.EndIteration();
      }
      if (!segment.checkpoint_to.empty()) sync.Checkpoint(segment.checkpoint_to);
      if (me == 0) {
        std::lock_guard<std::mutex> lock(mu);
        result = w;
        result.insert(result.end(), b.begin(), b.end());
      }
    }
    session.Barrier(kAllNodes);
  });
  return result;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/pacer-" + std::to_string(getpid()) + "-" + name;
}

class ResumeTest : public ::testing::TestWithParam<std::string> {};

// Gradients are summed in arrival order, so runs agree to rounding, not bit for bit. Without the
// servers' momentum the resumed run is off by about 0.25.
TEST_P(ResumeTest, AResumedJobEndsAsAnUninterruptedOne) {
  const std::string mode = GetParam();
  const std::string path = TempPath(mode.substr(0, 4) + ".ckpt");
  const std::vector<float> whole = Train(mode, {});
  const std::vector<float> first = Train(mode, {"", kIterations / 2, path});
  const std::vector<float> resumed = Train(mode, {path, kIterations, ""});
  ASSERT_EQ(resumed.size(), whole.size());
  EXPECT_GT(testing::RelativeDistance(first, whole), 1e-2) << "the first half did not stop early";
  EXPECT_LE(testing::RelativeDistance(resumed, whole), 1e-5);
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Modes, ResumeTest, ::testing::Values("bsp", "epsp:0"),
                         [](const auto& info) { return info.param == "bsp" ? "Bsp" : "EpspZero"; });

TEST(CheckpointTest, ACheckpointOfOtherTensorsIsRefusedByName) {
  const std::string path = TempPath("other.ckpt");
  Train("bsp", {"", 2, path, 1});
  std::string error;
  Train("bsp", {path, 4, "", 1, /*features=*/8, &error});
  EXPECT_NE(error.find("checkpoint " + path + " holds 'weights' of 64 values as tensor 0"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("'weights' of 32 values"), std::string::npos) << error;
  error.clear();
  Train("bsp", {path + ".missing", 4, "", 1, 16, &error});
  EXPECT_NE(error.find("cannot read checkpoint " + path + ".missing"), std::string::npos) << error;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pacer
