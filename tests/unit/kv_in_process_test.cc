// Push/pull protocol tests with every rank a thread: the job bodies of tests/common over
// LocalTransport and over UcxTransport (shared memory, TCP), the rest over LocalTransport.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "../common/in_process_job.h"
#include "../common/scenarios.h"
#include "pacer/kv_server.h"
#include "pacer/kv_worker.h"
#include "ps/node/node.h"
#include "session/node_of.h"

namespace pacer {
namespace {

using std::chrono::milliseconds;

struct JobShape {
  int servers;
  int workers;
  int server_threads;
};

using testing::InProcessTransport;

class KVInProcessTest : public ::testing::TestWithParam<std::tuple<JobShape, InProcessTransport>> {
 protected:
  Config MakeConfig() const {
    Config c;
    c.server_threads = shape().server_threads;
    c.timeout_s = 30;
    return c;
  }
  const JobShape& shape() const { return std::get<0>(GetParam()); }
  // Runs `body` on every rank of a job of this test's shape, over its transport.
  void Run(const std::function<void(Session&)>& body) const {
    testing::RunInProcessJob(shape().servers, shape().workers, MakeConfig(), body,
                             std::get<1>(GetParam()));
  }
};

TEST_P(KVInProcessTest, PullsReturnExactSums) {
  testing::RoundsOptions options;
  options.rounds = 8;
  options.max_keys = 40;
  options.max_len = 5000;
  Run([&](Session& session) { testing::PushPullRounds<int32_t>(session, options); });
}

TEST_P(KVInProcessTest, CallerErrorsNameWhatIsWrong) { Run(testing::CallerErrors); }

TEST_P(KVInProcessTest, MalformedPeerMessagesAreRejected) { Run(testing::MalformedPeerMessages); }

TEST_P(KVInProcessTest, PullsOfChangingLengthsLandWhereTheyBelong) {
  Run(testing::PullsWithChangingLengths);
}

// ps-lite's start-up race: a worker's first push reaches a server before its handler exists. Here
// the request waits at the server until the KVServer attaches, and succeeds.
TEST_P(KVInProcessTest, RequestsBeforeTheServerExistsAreServed) {
  Run(testing::RequestsBeforeServerStarts);
}

INSTANTIATE_TEST_SUITE_P(Shapes, KVInProcessTest,
                         ::testing::Combine(::testing::Values(JobShape{1, 1, 1}, JobShape{2, 3, 1},
                                                              JobShape{2, 3, 4}, JobShape{3, 2, 3}),
                                            ::testing::Values(InProcessTransport::kLocal,
                                                              InProcessTransport::kUcxSharedMemory,
                                                              InProcessTransport::kUcxTcp)),
                         [](const auto& info) {
                           const JobShape& shape = std::get<0>(info.param);
                           return std::to_string(shape.servers) + "servers" +
                                  std::to_string(shape.workers) + "workers" +
                                  std::to_string(shape.server_threads) + "threads_" +
                                  testing::NameOf(std::get<1>(info.param));
                         });

// A custom handler that answers late: it holds each push until every worker has pushed (what a
// BSP rule does), then answers them all. It also rejects user command 9 with an error.
TEST(KVLocalCustomHandlerTest, DeferredResponsesAndRejections) {
  Config config;
  config.server_threads = 1;
  config.timeout_s = 30;
  const int workers = 3;
  testing::RunInProcessJob(1, workers, config, [&](Session& session) {
    if (session.is_server()) {
      std::vector<RequestMeta> held;
      int64_t sum = 0;
      KVServer<int64_t> server(session, [&](const RequestMeta& meta, const KVRequest<int64_t>& req,
                                            KVServer<int64_t>* s) {
        if (meta.user_command == 9) throw Error("command 9 is not served here");
        if (meta.push) {
          sum += req.vals[0];
          held.push_back(meta);
          if (static_cast<int>(held.size()) == workers) {
            for (const RequestMeta& m : held) s->Response(m);
            held.clear();
          }
        } else {
          s->Response(meta, {{req.keys.begin(), req.keys.end()}, {sum}, {}});
        }
      });
      session.Finalize();
    } else if (session.is_worker()) {
      KVWorker<int64_t> kv(session);
      int ts = kv.Push({42}, {int64_t(session.role_index() + 1)});
      kv.Wait(ts);  // returns only once all workers pushed
      std::vector<int64_t> out;
      kv.Wait(kv.Pull({42}, &out));
      EXPECT_EQ(out, (std::vector<int64_t>{1 + 2 + 3}));
      int rejected = kv.Pull({42}, &out, nullptr, /*cmd=*/9);
      try {
        kv.Wait(rejected);
        ADD_FAILURE() << "expected the server's rejection";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("command 9 is not served here"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("server rank 1 rejected PULL"), std::string::npos)
            << e.what();
      }
    }
  });
}

// A peer's request for an app that no server serves is answered with an error naming the app once
// --timeout_s has passed, instead of waiting at the server for ever.
TEST(KVLocalUnknownAppTest, RequestsForAnAppNobodyServesAreRejected) {
  Config config;
  config.timeout_s = 1;
  config.server_threads = 1;
  testing::RunInProcessJob(2, 1, config, testing::RequestsForAnAppNobodyServes);
}

// Waits have deadlines: a request the server never answers times out.
TEST(KVLocalTimeoutTest, UnansweredRequestTimesOut) {
  Config config;
  config.timeout_s = 0.3;
  config.server_threads = 1;
  testing::RunInProcessJob(1, 1, config, [&](Session& session) {
    if (session.is_server()) {
      std::vector<RequestMeta> ignored;
      KVServer<float> server(session, [&](const RequestMeta& meta, const KVRequest<float>&,
                                          KVServer<float>*) { ignored.push_back(meta); });
      session.Finalize();
    } else if (session.is_worker()) {
      KVWorker<float> kv(session);
      int ts = kv.Push({1}, {1.0f});
      EXPECT_FALSE(kv.Wait(ts, milliseconds(20)));
      EXPECT_THROW(kv.Wait(ts), TimeoutError);
      EXPECT_THROW(kv.Wait(ts), Error);  // abandoned: now unknown
    }
  });
}

TEST(KVLocalCallbackTest, CallbackRunsBeforeWaitReturns) {
  Config config;
  config.timeout_s = 30;
  testing::RunInProcessJob(2, 1, config, [&](Session& session) {
    if (session.is_server()) {
      KVServer<float> server(session);
      session.Finalize();
    } else if (session.is_worker()) {
      KVWorker<float> kv(session);
      std::atomic<int> calls{0};
      std::vector<Key> keys = {1, 2, 3, 4, 5, 6, 7, 8};
      std::vector<float> vals(8, 1.0f);
      kv.Wait(kv.ZPush(keys, vals, {}, 0, [&] { ++calls; }));
      EXPECT_EQ(calls.load(), 1);
      std::vector<float> out;
      kv.Wait(kv.Pull(keys, &out, nullptr, 0, [&] {
        EXPECT_EQ(out.size(), 8u);  // assembled before the callback
        ++calls;
      }));
      EXPECT_EQ(calls.load(), 2);
    }
  });
}

// A request split over a server's threads is answered in the request's key order (the worker
// relies on it to receive values in place), small keys gathered per thread and large ones as runs.
TEST(KVLocalResponseOrderTest, SplitRequestsAreAnsweredInKeyOrder) {
  Config config;
  config.server_threads = 4;
  config.timeout_s = 30;
  testing::RunInProcessJob(1, 1, config, [&](Session& session) {
    if (session.is_server()) {
      KVServer<float> server(session);
      session.Finalize();
      return;
    }
    if (!session.is_worker()) return;
    KVWorker<float> kv(session);
    for (int values_per_key : {3, 20000}) {  // 12 B (gathered per thread), 80 KB (runs)
      std::vector<Key> keys;
      std::vector<float> vals;
      for (Key k = 0; k < 40; ++k) {
        keys.push_back(1000 * values_per_key + k);
        for (int j = 0; j < values_per_key; ++j) vals.push_back(float(k));
      }
      kv.Wait(kv.Push(keys, vals));
      // Pull through a client sink of our own, to see the response as it arrives.
      std::mutex mu;
      std::condition_variable cv;
      std::vector<Key> answered;
      std::vector<float> values;
      Node& node = NodeOf(session);
      int id = node.dispatcher().AttachClient([&](Message&& msg) {
        std::lock_guard<std::mutex> lock(mu);
        answered.assign(msg.keys.as<Key>(), msg.keys.as<Key>() + msg.num_keys());
        Buffer v = msg.vals_buffer();
        values.assign(v.as<float>(), v.as<float>() + v.count<float>());
        cv.notify_all();
      });
      Message pull;
      pull.meta.set_command(proto::PULL);
      pull.meta.set_sender(session.rank());
      pull.meta.set_client_id(id);
      pull.meta.set_value_size(sizeof(float));
      pull.keys = Buffer::FromVector(std::vector<Key>(keys));
      node.transport().Send(1, pull, nullptr);
      std::unique_lock<std::mutex> lock(mu);
      ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return !answered.empty(); }));
      EXPECT_EQ(answered, keys) << values_per_key << " values per key";
      EXPECT_EQ(values, vals) << values_per_key << " values per key";
      lock.unlock();
      node.dispatcher().DetachClient(id);
    }
  });
}

// A request's values for one server travel in messages of at most max_message_bytes, whole keys
// each (a larger key alone). Pulls are cut so once an earlier pull told the keys' lengths.
TEST(KVLocalMessageSizeTest, LargeRequestsTravelInMessagesOfWholeKeys) {
  Config config;
  config.server_threads = 1;  // the handler then sees each message whole
  config.timeout_s = 30;
  config.tuning.max_message_bytes = 10000;
  testing::RunInProcessJob(1, 1, config, [&](Session& session) {
    if (session.is_server()) {
      std::map<Key, std::vector<float>> store;
      std::vector<std::pair<bool, size_t>> messages;  // (push, keys) of each request received
      KVServer<float> server(session, [&](const RequestMeta& meta, const KVRequest<float>& req,
                                          KVServer<float>* s) {
        messages.emplace_back(meta.push, req.keys.size());
        if (meta.push) {
          size_t at = 0;
          for (size_t i = 0; i < req.keys.size(); ++i) {
            store[req.keys[i]].assign(req.vals.begin() + at, req.vals.begin() + at + req.length(i));
            at += req.length(i);
          }
          s->Response(meta);
          return;
        }
        KVPairs<float> res;
        for (Key k : req.keys) {
          res.keys.push_back(k);
          res.vals.insert(res.vals.end(), store[k].begin(), store[k].end());
          res.lens.push_back(static_cast<int>(store[k].size()));
        }
        s->Response(meta, std::move(res));
      });
      session.Finalize();
      // The push, then the two pulls: 8000, 8000, 12000 (alone), 8000 and 4000 B; the first pull
      // whole, its lengths not yet known.
      const std::vector<std::pair<bool, size_t>> expected = {
          {true, 2},  {true, 2},  {true, 1},  {true, 2},  {true, 1}, {false, 8},
          {false, 2}, {false, 2}, {false, 1}, {false, 2}, {false, 1}};
      EXPECT_EQ(messages, expected);
      return;
    }
    if (!session.is_worker()) return;
    KVWorker<float> kv(session);
    // 1000 values (4000 B) per key, but key 5 has 3000 (12000 B, over the limit).
    const std::vector<Key> keys = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<int> lens = {1000, 1000, 1000, 1000, 3000, 1000, 1000, 1000};
    std::vector<float> vals;
    for (size_t i = 0; i < keys.size(); ++i) {
      for (int j = 0; j < lens[i]; ++j) vals.push_back(float(keys[i] * 10000 + j));
    }
    kv.Wait(kv.Push(keys, vals, lens));
    for (int pull = 0; pull < 2; ++pull) {
      std::vector<float> out;
      std::vector<int> out_lens;
      kv.Wait(kv.Pull(keys, &out, &out_lens));
      EXPECT_EQ(out, vals) << "pull " << pull;
      EXPECT_EQ(out_lens, lens) << "pull " << pull;
    }
  });
}

TEST(KVLocalBarrierTest, GroupsAndMembership) {
  Config config;
  config.timeout_s = 30;
  std::atomic<int> arrived{0};
  testing::RunInProcessJob(2, 3, config, [&](Session& session) {
    if (session.is_worker()) {
      ++arrived;
      session.Barrier(kWorkerGroup);
      EXPECT_EQ(arrived.load(), 3);  // nobody leaves before all three arrived
      EXPECT_THROW(session.Barrier(kServerGroup), Error);
    }
    if (session.is_server()) session.Barrier(kServerGroup);
    session.Barrier(kAllNodes);
    session.Barrier(kServerGroup | kWorkerGroup | kSchedulerGroup);
  });
}

}  // namespace
}  // namespace pacer
