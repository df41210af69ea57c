// SMS's gradient-transfer skip with every rank a thread: a worker ordered to skip sends a gradient
// little changed since the last one it sent as "same as last", which leaves the parameters
// exactly as if it had re-sent that gradient, also when the key moves to another server; the
// server keeps only what skipping workers sent and
// frees it when the order ends; a "same as last" the server cannot stand for is refused with an
// error naming the key and the worker, and the server goes on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../common/error_of.h"
#include "../common/in_process_job.h"
#include "../common/skip_cache.h"
#include "pacer/detail/routed_client.h"
#include "pacer/error.h"
#include "pacer/gradient_sync.h"
#include "pacer/migration_control.h"
#include "ps/node/node.h"
#include "scheduler/relay_orders.h"
#include "session/node_of.h"

namespace pacer {
namespace {

constexpr size_t kCount = 64;

std::vector<float> Scaled(const std::vector<float>& v, float by) {
  std::vector<float> out(v);
  for (float& x : out) x *= by;
  return out;
}

// Worker 1's gradients, by iteration, and what a skip at --skip_eps=0.05 leaves the server with:
// within 5% of the last one sent it stands for that one.
struct Schedule {
  std::vector<std::vector<float>> sent, applied;
  std::vector<bool> skipped;
};

Schedule SkipSchedule() {
  std::mt19937 random(11);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> v(kCount);
  for (float& x : v) x = value(random);
  Schedule s;
  auto add = [&](float scale, int last_sent) {
    s.sent.push_back(Scaled(v, scale));
    s.skipped.push_back(last_sent >= 0);
    s.applied.push_back(last_sent >= 0 ? s.sent[last_sent] : s.sent.back());
  };
  add(1, -1);    // nothing kept yet: sent
  add(1.01, 0);  // 1% from iteration 0's
  add(1.03, 0);
  add(1.04, 0);  // 4% from the last one sent, iteration 0's: still skipped
  add(2, -1);
  add(2.05, 4);  // 2.5% from iteration 4's
  add(-1, -1);
  add(-1, 6);  // unchanged
  return s;
}

// One job: worker 0 pushes a constant gradient, worker 1 the schedule's `sent` (skipping, where
// the scheduler orders it) or its `applied` (plainly). With `move`, the job has 2 servers, and the
// scheduler moves the key to the other one after iteration 1, while worker 1 skips. Returns
// worker 1's parameters after each iteration; worker 1 checks its traffic. `cached`: the bytes
// the servers keep, over the servers, once trained (skipping), then after a plain push.
std::vector<std::vector<float>> Train(bool skip, bool move, std::atomic<int64_t> cached[2]) {
  const Schedule schedule = SkipSchedule();
  const int iterations = static_cast<int>(schedule.sent.size());
  constexpr int kMoveAfter = 1;
  const int scheduler_and_workers = kSchedulerGroup | kWorkerGroup;
  Config config;
  config.timeout_s = 60;
  config.optimizer = "sgd:lr=0.5";
  config.servers = move ? 2 : 1;
  std::vector<std::vector<float>> params;
  testing::RunInProcessJob(config.servers, 2, config, [&](Session& session) {
    if (session.is_server()) return testing::ServeCountingSkipCache(session, cached);
    if (session.is_worker()) {
      const int me = session.role_index();
      std::vector<float> w(kCount, 0.f), constant(kCount, 0.25f);
      GradientSync sync(session);
      sync.Register("w", w.data(), w.size());
      sync.AllowBatchSizes({1});
      session.Barrier(kAllNodes);  // ordered
      for (int i = 0; i < iterations; ++i) {
        sync.BeginIteration(1);
        const std::vector<float>& g = skip ? schedule.sent[i] : schedule.applied[i];
        sync.PushPull("w", me == 0 ? constant.data() : g.data(), w.data());
        sync.EndIteration();
        if (move && i == kMoveAfter) {
          session.Barrier(scheduler_and_workers);
          session.Barrier(scheduler_and_workers);  // moved
        }
        if (me != 1) continue;
        params.push_back(w);
        const bool skipped = skip && schedule.skipped[i];
        EXPECT_EQ(sync.last_iteration().pushes_skipped, skipped ? 1 : 0) << "iteration " << i;
        EXPECT_EQ(sync.last_iteration().bytes_out,
                  skipped ? 0 : static_cast<int64_t>(kCount * sizeof(float)))
            << "iteration " << i;
        EXPECT_EQ(sync.last_iteration().pulls_unchanged, 0) << "iteration " << i;
      }
      session.Barrier(kAllNodes);
      session.Barrier(kAllNodes);  // the skip is off from here
      sync.BeginIteration(1);
      sync.PushPull("w", me == 0 ? constant.data() : schedule.sent.back().data(), w.data());
      sync.EndIteration();
      if (me == 1) {
        EXPECT_EQ(sync.last_iteration().pushes_skipped, 0);
      }
      session.Barrier(kAllNodes);
      return;
    }
    RelayOrders orders(NodeOf(session));
    orders.TuneBatches({{1, 1, 1.0, skip}}, 1.0);
    session.Barrier(kAllNodes);
    if (move) {
      session.Barrier(scheduler_and_workers);
      MigrationControl control(session);
      const int range = control.RangeOf(0);
      control.MoveRange(range, 1 - control.OwnerOf(range));
      session.Barrier(scheduler_and_workers);
    }
    session.Barrier(kAllNodes);
    orders.TuneBatches({{1, 1, 1.0, false}}, 1.0);
    session.Barrier(kAllNodes);
    session.Barrier(kAllNodes);
  });
  return params;
}

class GradientSkipTest : public ::testing::TestWithParam<bool> {};

// Kept: the skipping worker's last gradient sent of the one key and the parameters last sent to it
// (on the server that owns it now, when it moved); freed by its plain push and pull. The parameters
// move more than --skip_pull_eps every iteration here, so every pull carries them.
TEST_P(GradientSkipTest, ParametersEqualThoseOfResendingTheLastGradient) {
  const bool move = GetParam();
  std::atomic<int64_t> skipping_cache[2] = {0, 0}, plain_cache[2] = {0, 0};
  const std::vector<std::vector<float>> skipping = Train(true, move, skipping_cache);
  const std::vector<std::vector<float>> plain = Train(false, move, plain_cache);
  ASSERT_EQ(skipping.size(), SkipSchedule().sent.size());
  ASSERT_EQ(plain.size(), skipping.size());
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(skipping[i], plain[i]) << "iteration " << i;
  // The last gradient worker 1 sent, and the parameters last sent to it.
  EXPECT_EQ(skipping_cache[0], static_cast<int64_t>(2 * kCount * sizeof(float)));
  EXPECT_EQ(skipping_cache[1], 0);
  EXPECT_EQ(plain_cache[0], 0);
  EXPECT_EQ(plain_cache[1], 0);
}

INSTANTIATE_TEST_SUITE_P(Key, GradientSkipTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "MovedToAnotherServer" : "OnOneServer";
                         });

// Raw requests for one key, as a worker that does not follow the protocol could send them.
class RawKey {
 public:
  explicit RawKey(Session& session) : kv_(session, 0, sizeof(float)) {}

  // A push of `values` (none: a push without values) with the skip's flags.
  void Push(int64_t clock, const std::vector<float>* values, bool init, bool keep, bool same) {
    static constexpr int32_t kNoValues = 0;
    detail::Request r{
        detail::Operation::kPush, Buffer::Copy(&key_, sizeof(Key)), {}, {}, {}, nullptr, 0, {}};
    if (values) {
      r.values = Buffer::Copy(values->data(), values->size() * sizeof(float));
    } else {
      r.lens = Buffer::Copy(&kNoValues, sizeof(kNoValues));
    }
    r.sync.clock = clock;
    r.sync.init = init;
    r.sync.cache_gradient = keep;
    r.sync.same_as_last = same;
    kv_.Wait(kv_.Submit(std::move(r)));
  }

  // The values pulled (none for an answer "unchanged") and the response's stamp.
  struct Pulled {
    std::vector<float> values;
    ResponseStamp stamp;
  };
  Pulled Pull(int64_t clock, bool keep_parameters = false, int64_t version = 0) {
    Pulled pulled;
    detail::Request r{
        detail::Operation::kPull, Buffer::Copy(&key_, sizeof(Key)), {}, {}, {}, nullptr, 0, {}};
    r.sync.clock = clock;
    r.sync.version = version;
    r.sync.after_own_push = true;
    r.sync.keep_parameters = keep_parameters;
    r.sync.answer = std::make_shared<ResponseStamp>();
    r.destination.values = [&](size_t bytes) {
      pulled.values.resize(bytes / sizeof(float));
      return bytes > 0 ? reinterpret_cast<uint8_t*>(pulled.values.data()) : nullptr;
    };
    std::shared_ptr<ResponseStamp> answer = r.sync.answer;
    kv_.Wait(kv_.Submit(std::move(r)));
    pulled.stamp = *answer;
    return pulled;
  }

 private:
  const Key key_ = 7;
  detail::RoutedClient kv_;
};

// One server, one worker whose requests `body` sends.
void WithRawKey(const std::function<void(Session&, RawKey&)>& body) {
  Config config;
  config.timeout_s = 30;
  config.optimizer = "sgd:lr=1";
  config.skip_pull_eps = 0.01;
  testing::RunInProcessJob(1, 1, config, [&](Session& session) {
    if (session.is_server()) return testing::ServeUntilBarriers(session);
    if (session.is_worker()) {
      RawKey raw(session);
      body(session, raw);
    }
    session.Barrier(kAllNodes);
  });
}

TEST(GradientSkipRefusalTest, SameAsLastWithNothingKeptIsRefusedAndTheServerGoesOn) {
  WithRawKey([](Session& session, RawKey& raw) {
    const std::vector<float> initial(4, 1.f), gradient = {1, 2, 3, 4};
    auto pull = [&](int64_t clock) { return raw.Pull(clock).values; };
    raw.Push(0, &initial, true, false, false);
    const std::string rank = std::to_string(session.rank());
    EXPECT_THAT(testing::ErrorOf([&] { raw.Push(0, nullptr, false, false, true); }),
                ::testing::HasSubstr(
                    "key 7: worker 0 (rank " + rank +
                    ") sent 'same as last', but no gradient of it is kept for that worker"));
    EXPECT_THAT(testing::ErrorOf([&] { raw.Push(0, &gradient, false, true, true); }),
                ::testing::HasSubstr("key 7: worker 0 (rank " + rank +
                                     ") sent 'same as last' and a gradient to keep in one push"));
    // Nothing of the refused pushes was applied: the kept gradient, then the skip standing for
    // it, move the parameters twice.
    raw.Push(0, &gradient, false, true, false);
    EXPECT_EQ(pull(1), (std::vector<float>{0, -1, -2, -3}));
    raw.Push(1, nullptr, false, false, true);
    EXPECT_EQ(pull(2), (std::vector<float>{-1, -3, -5, -7}));
    // A plain push frees what was kept: a skip after it is refused again.
    raw.Push(2, &gradient, false, false, false);
    EXPECT_EQ(pull(3), (std::vector<float>{-2, -5, -8, -11}));
    EXPECT_THAT(testing::ErrorOf([&] { raw.Push(3, nullptr, false, false, true); }),
                ::testing::HasSubstr("no gradient of it is kept"));
  });
}

// The pull side: "unchanged" only to a worker that holds the version last sent to it, while the
// parameters moved within --skip_pull_eps (1% here) of it; a plain pull frees the copy.
TEST(ParameterSkipTest, UnchangedOnlyForTheVersionLastSentAndWithinEps) {
  WithRawKey([](Session&, RawKey& raw) {
    const std::vector<float> initial(4, 1.f), small(4, 0.004f);
    raw.Push(0, &initial, true, false, false);
    auto after = [](int updates) {  // the parameters after `updates` of lr 1 x small, in floats
      float v = 1.f;
      for (int i = 0; i < updates; ++i) v -= 0.004f;
      return std::vector<float>(4, v);
    };
    auto step = [&](int64_t clock, bool keep, int64_t version) {
      raw.Push(clock, &small, false, false, false);
      return raw.Pull(clock + 1, keep, version);
    };
    RawKey::Pulled p = step(0, true, 0);  // nothing sent to keep yet
    EXPECT_EQ(p.values, after(1));
    EXPECT_EQ(p.stamp.unchanged_keys, 0);
    EXPECT_EQ(p.stamp.version, 1);
    p = step(1, true, 1);  // 0.992 is 0.4% from 0.996
    EXPECT_TRUE(p.values.empty());
    EXPECT_EQ(p.stamp.unchanged_keys, 1);
    EXPECT_EQ(p.stamp.version, 1);  // the version the worker holds
    p = step(2, true, 0);  // the worker does not hold what was sent (version 1): the values
    EXPECT_EQ(p.values, after(3));
    EXPECT_EQ(p.stamp.unchanged_keys, 0);
    EXPECT_EQ(p.stamp.version, 3);
    p = step(3, true, 3);
    EXPECT_EQ(p.stamp.unchanged_keys, 1);
    p = step(4, true, 3);  // 0.98 is 0.8% from 0.988, 0.976 1.2%: the values
    EXPECT_TRUE(p.values.empty());
    p = step(5, true, 3);
    EXPECT_EQ(p.values, after(6));
    EXPECT_EQ(p.stamp.version, 6);
    p = step(6, false, 6);  // a plain pull: the values, and the copy is freed
    EXPECT_EQ(p.values, after(7));
    p = step(7, true, 7);
    EXPECT_EQ(p.stamp.unchanged_keys, 0);
    EXPECT_EQ(p.values, after(8));
  });
}

}  // namespace
}  // namespace pacer
