// Liveness on its own: three ranks whose heartbeats are delivered directly, one of which stops
// sending them. The scheduler names a silent rank; the others name a silent scheduler; nobody
// is lost while all send.
#include "ps/cluster/liveness.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace pacer {
namespace {

using ::testing::HasSubstr;

constexpr auto kTimeout = std::chrono::milliseconds(600);

// Ranks 0 (scheduler), 1 (server), 2 (worker) on hosts h0..h2; a frozen rank's heartbeats are
// dropped.
class Trio {
 public:
  Trio() : roles_(3, 1) {
    for (int r = 0; r < 3; ++r) {
      ranks_.push_back(std::make_unique<Liveness>(
          roles_, r, std::vector<std::string>{"h0", "h1", "h2"}, kTimeout,
          [this, r](int dst, const Message& msg) {
            if (!frozen_[r]) ranks_[dst]->Heard(msg);
          },
          [this, r](int rank, const std::string& description) {
            std::lock_guard<std::mutex> lock(mu_);
            losses_.push_back({r, rank, description});
          }));
    }
    for (auto& rank : ranks_) rank->Start();
  }
  ~Trio() {
    for (auto& rank : ranks_) rank->Stop();
  }
  void Freeze(int rank) { frozen_[rank] = true; }
  struct Loss {
    int seen_by, rank;
    std::string description;
  };
  // The losses once `count` were seen, or after 20 timeouts.
  std::vector<Loss> WaitFor(size_t count) {
    for (int i = 0; i < 200; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (losses_.size() >= count) return losses_;
      }
      std::this_thread::sleep_for(kTimeout / 10);
    }
    std::lock_guard<std::mutex> lock(mu_);
    return losses_;
  }

 private:
  const Roles roles_;
  std::atomic<bool> frozen_[3] = {false, false, false};
  std::vector<std::unique_ptr<Liveness>> ranks_;
  std::mutex mu_;
  std::vector<Loss> losses_;
};

TEST(LivenessTest, NobodyIsLostWhileAllSendHeartbeats) {
  Trio trio;
  std::this_thread::sleep_for(kTimeout * 3);
  EXPECT_TRUE(trio.WaitFor(0).empty());
}

TEST(LivenessTest, TheSchedulerNamesASilentWorker) {
  Trio trio;
  std::this_thread::sleep_for(kTimeout / 2);
  trio.Freeze(2);
  const std::vector<Trio::Loss> losses = trio.WaitFor(1);
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_EQ(losses[0].seen_by, 0);
  EXPECT_EQ(losses[0].rank, 2);
  EXPECT_THAT(losses[0].description,
              HasSubstr("worker 0 (rank 2 on host h2) stopped answering: last heard from"));
  // The scheduler stops sending to a lost rank: were it only slow, it learns it was left.
  std::this_thread::sleep_for(kTimeout * 2);
  const std::vector<Trio::Loss> later = trio.WaitFor(2);
  ASSERT_EQ(later.size(), 2u) << "a rank is lost once";
  EXPECT_EQ(later[1].seen_by, 2);
  EXPECT_EQ(later[1].rank, 0);
}

TEST(LivenessTest, EveryRankNamesASilentScheduler) {
  Trio trio;
  trio.Freeze(0);
  const std::vector<Trio::Loss> losses = trio.WaitFor(2);
  ASSERT_EQ(losses.size(), 2u);
  for (const Trio::Loss& loss : losses) {
    EXPECT_NE(loss.seen_by, 0);
    EXPECT_EQ(loss.rank, 0);
    EXPECT_THAT(loss.description, HasSubstr("scheduler 0 (rank 0 on host h0) stopped answering"));
  }
}

}  // namespace
}  // namespace pacer
