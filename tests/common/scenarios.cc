#include "scenarios.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "../common/error_of.h"
#include "kv_pattern.h"
#include "pacer/kv_server.h"
#include "pacer/kv_worker.h"
#include "ps/node/node.h"
#include "session/node_of.h"

namespace pacer {
namespace testing {
namespace {

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

// Servers serve with the default handler until the job ends; true if this rank is done.
template <typename T>
bool ServeIfServer(Session& session) {
  if (session.is_server()) {
    KVServer<T> server(session);
    session.Finalize();
  }
  return !session.is_worker();
}

// Each worker owns its own keys in these scenarios, so workers never disturb each other.
Key OwnKey(const Session& session, Key k) { return k + 1000000 * Key(session.role_index() + 1); }

void ExpectStillServes(KVWorker<float>& kv, Key key, float expected) {
  std::vector<float> out;
  kv.Wait(kv.Pull({key}, &out));
  EXPECT_EQ(out, std::vector<float>({expected})) << "key " << key;
}

}  // namespace

template <typename T>
void PushPullRounds(Session& session, const RoundsOptions& options) {
  if (ServeIfServer<T>(session)) return;
  KVWorker<T> kv(session);
  std::mt19937_64 rng(options.seed);
  const int workers = session.num_workers();
  for (int round = 0; round < options.rounds; ++round) {
    KeySet set = RandomKeySet(rng, Key(round) * 100000, 100000, options.max_keys, options.max_len);
    std::vector<T> vals = ValuesOf<T>(session.role_index(), set);
    if (round % 2 == 0) {
      kv.Wait(kv.Push(set.keys, vals, set.lens));
    } else {
      kv.Wait(kv.ZPush(set.keys, vals, set.lens));
    }
    session.Barrier(kWorkerGroup);
    const std::vector<T> expected = SumOverWorkers<T>(workers, set);
    std::vector<T> pulled;
    std::vector<int> lens;
    kv.Wait(kv.Pull(set.keys, &pulled, &lens));
    ASSERT_EQ(lens, set.lens) << "round " << round;
    ASSERT_TRUE(pulled == expected) << "round " << round << ": pulled values differ from the sums";
    std::vector<T> fixed(set.total());
    std::vector<int> fixed_lens(set.keys.size(), -1);
    kv.Wait(kv.ZPull(set.keys, Span<T>(fixed.data(), fixed.size()),
                     Span<int>(fixed_lens.data(), fixed_lens.size())));
    ASSERT_TRUE(fixed == expected) << "round " << round << ": ZPull values differ from the sums";
    ASSERT_EQ(fixed_lens, set.lens);
    session.Barrier(kWorkerGroup);  // nobody pushes the next round before all have pulled
  }
  // Keys without lengths (every key the same count); PushPull returns the value after its push.
  std::vector<Key> keys = {1, 2, 3, 1000, 1001};
  std::vector<T> ones(keys.size() * 3, T(1));
  kv.Wait(kv.Push(keys, ones));
  session.Barrier(kWorkerGroup);
  std::vector<T> after;
  kv.Wait(kv.PushPull(keys, ones, &after));
  ASSERT_EQ(after.size(), ones.size());
  for (T v : after) {
    EXPECT_GE(v, T(workers + 1));
    EXPECT_LE(v, T(2 * workers));
  }
  session.Barrier(kWorkerGroup);
  std::vector<T> final_values;
  kv.Wait(kv.Pull(keys, &final_values));
  EXPECT_TRUE(final_values == std::vector<T>(15, T(2 * workers)));
}

template void PushPullRounds<int32_t>(Session&, const RoundsOptions&);
template void PushPullRounds<float>(Session&, const RoundsOptions&);
template void PushPullRounds<uint8_t>(Session&, const RoundsOptions&);

void CallerErrors(Session& session) {
  if (ServeIfServer<float>(session)) return;
  const std::string me = std::to_string(session.rank());
  const std::string prefix = "rank " + me + ": ";
  KVWorker<float> kv(session);
  const Key k7 = OwnKey(session, 7), k99 = OwnKey(session, 99);
  kv.Wait(kv.Push({k7}, {1.5f}));

  EXPECT_EQ(testing::ErrorOf([&] {
              kv.Push({3, 1}, {1, 2});
            }),
            prefix + "invalid push: keys not sorted: key 1 at position 1 follows key 3");
  EXPECT_EQ(testing::ErrorOf([&] {
              kv.Push({1, 1}, {1, 2});
            }),
            prefix + "invalid push: duplicate key 1 at positions 0 and 1");
  EXPECT_EQ(testing::ErrorOf([&] {
              kv.Push({1, 2}, {1, 2, 3});
            }),
            prefix +
                "invalid push: 3 values for 2 keys: without lengths every key needs the same "
                "number of values");
  EXPECT_EQ(testing::ErrorOf([&] {
              kv.Push({1, 2}, {1, 2, 3}, {1, 1});
            }),
            prefix + "invalid push: lengths add up to 2 values, but 3 were given for 2 keys");
  EXPECT_EQ(testing::ErrorOf([&] {
              kv.Push({1, 2}, {1, 2, 3}, {3});
            }),
            prefix + "invalid push: 1 lengths for 2 keys");
  std::vector<float> out;
  EXPECT_EQ(testing::ErrorOf([&] { kv.Pull({}, &out); }), prefix + "invalid pull: no keys");
  EXPECT_EQ(testing::ErrorOf([&] { kv.Wait(12345); }),
            "Wait on unknown timestamp 12345 on rank " + me +
                ": it was never returned by this KVWorker, or was already waited for");

  // A pull of a key never pushed: the owning server names the key and both ranks.
  const std::string owner99 = std::to_string(1 + session.ServerOfKey(k99));
  std::string error = testing::ErrorOf([&] { kv.Wait(kv.Pull({k99}, &out)); });
  EXPECT_CONTAINS(error, "server rank " + owner99 + " rejected PULL");
  EXPECT_CONTAINS(error, "key " + std::to_string(k99) + " was never pushed (pull from rank " + me +
                             ", server rank " + owner99 + ")");
  ExpectStillServes(kv, k7, 1.5f);

  // A push whose length differs from what the server holds for the key.
  error = testing::ErrorOf([&] { kv.Wait(kv.Push({k7}, {1.0f, 2.0f})); });
  EXPECT_CONTAINS(error, "key " + std::to_string(k7) + ": rank " + me +
                             " pushed 2 values, but server rank " +
                             std::to_string(1 + session.ServerOfKey(k7)) + " holds 1");
  ExpectStillServes(kv, k7, 1.5f);

  // A destination buffer of the wrong size.
  std::vector<float> small(3);
  const std::vector<Key> just_k7 = {k7};
  error = testing::ErrorOf(
      [&] { kv.Wait(kv.ZPull(just_k7, Span<float>(small.data(), small.size()))); });
  EXPECT_CONTAINS(error, "the destination buffer does not hold the 4 bytes pulled for 1 keys");

  // Values of another type than the server's.
  KVWorker<double> doubles(session);
  error = testing::ErrorOf([&] { doubles.Wait(doubles.Push({k7}, {1.0})); });
  EXPECT_CONTAINS(error, "values of 8 bytes, but the KVServer of app 0 holds values of 4 bytes");
  ExpectStillServes(kv, k7, 1.5f);

  // The wrong role.
  EXPECT_CONTAINS(testing::ErrorOf([&] { KVServer<float> not_here(session); }),
                  "rank " + me + " is a worker, not a server: it cannot host a KVServer");
}

namespace {

// Captures the responses a server sends to a client id of our own.
class ResponseCatcher {
 public:
  explicit ResponseCatcher(Dispatcher& dispatcher) : dispatcher_(dispatcher) {
    id_ = dispatcher.AttachClient([this](Message&& msg) {
      std::lock_guard<std::mutex> lock(mu_);
      errors_.push_back(msg.meta.error());
      cv_.notify_all();
    });
  }
  ~ResponseCatcher() { dispatcher_.DetachClient(id_); }
  int id() const { return id_; }
  std::string Next() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(30), [&] { return !errors_.empty(); })) {
      return "no response";
    }
    std::string e = errors_.front();
    errors_.erase(errors_.begin());
    return e;
  }

 private:
  Dispatcher& dispatcher_;
  int id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> errors_;
};

Message RawPush(const Session& session, int client, std::vector<Key> keys,
                std::vector<float> vals) {
  Message msg;
  msg.meta.set_command(proto::PUSH);
  msg.meta.set_sender(session.rank());
  msg.meta.set_client_id(client);
  msg.meta.set_request_id(1000);
  msg.meta.set_value_size(sizeof(float));
  msg.keys = Buffer::FromVector(std::move(keys));
  msg.vals = {Buffer::FromVector(std::move(vals))};
  return msg;
}

}  // namespace

void RequestsForAnAppNobodyServes(Session& session) {
  if (ServeIfServer<float>(session)) return;
  Node& node = NodeOf(session);
  KVWorker<float> kv(session);
  const Key k7 = OwnKey(session, 7);
  const int server = 1 + session.ServerOfKey(k7);
  ResponseCatcher catcher(node.dispatcher());
  Message unknown_app = RawPush(session, catcher.id(), {k7}, {1});
  unknown_app.meta.set_app_id(99);
  node.transport().Send(server, unknown_app, nullptr);
  EXPECT_CONTAINS(catcher.Next(), "no KVServer for app 99 started on server rank " +
                                      std::to_string(server) + " within ");
  kv.Wait(kv.Push({k7}, {1.5f}));
  ExpectStillServes(kv, k7, 1.5f);
}

void MalformedPeerMessages(Session& session) {
  if (ServeIfServer<float>(session)) return;
  Node& node = NodeOf(session);
  Transport& transport = node.transport();
  KVWorker<float> kv(session);
  const Key k7 = OwnKey(session, 7);
  const int server = 1 + session.ServerOfKey(k7);
  kv.Wait(kv.Push({k7}, {1.5f}));
  ResponseCatcher catcher(node.dispatcher());

  // Semantically bad requests get an error response naming what is wrong.
  transport.Send(server, RawPush(session, catcher.id(), {k7 + 2, k7}, {1, 2}), nullptr);
  EXPECT_CONTAINS(catcher.Next(), "keys not sorted: key " + std::to_string(k7) +
                                      " at position 1 follows key " + std::to_string(k7 + 2));
  Message wrong_size = RawPush(session, catcher.id(), {k7}, {1});
  wrong_size.meta.set_value_size(2);
  transport.Send(server, wrong_size, nullptr);
  EXPECT_CONTAINS(catcher.Next(), "values of 2 bytes, but the KVServer of app 0 holds values");
  Message pull_with_values = RawPush(session, catcher.id(), {k7}, {1});
  pull_with_values.meta.set_command(proto::PULL);
  transport.Send(server, pull_with_values, nullptr);
  EXPECT_CONTAINS(catcher.Next(), "a pull carries 4 bytes of values");
  transport.Send(session.rank(), RawPush(session, catcher.id(), {k7}, {1}), nullptr);
  EXPECT_CONTAINS(catcher.Next(), "rank is a worker, not a server");
  Message far_ahead = RawPush(session, catcher.id(), {k7}, {1});
  far_ahead.meta.set_epoch(int64_t{1} << 40);  // would be held until that table comes: never
  transport.Send(server, far_ahead, nullptr);
  EXPECT_CONTAINS(catcher.Next(), "request under routing epoch 1099511627776, but server rank " +
                                      std::to_string(server) + " is at epoch 0");

  // Bytes that are no valid message are dropped by the transport (and logged), never handled.
  Message good = RawPush(session, catcher.id(), {k7}, {100});
  std::vector<uint8_t> header = EncodeHeader(good);
  std::vector<Buffer> payload = PayloadFragments(good);
  transport.SendBytes(server, std::vector<uint8_t>(header.begin(), header.begin() + 5), payload,
                      nullptr);
  std::vector<uint8_t> bad_magic = header;
  bad_magic[1] ^= 0x55;
  transport.SendBytes(server, bad_magic, payload, nullptr);
  transport.SendBytes(server, header, {}, nullptr);  // payload missing
  std::vector<uint8_t> bad_meta = header;
  for (size_t i = sizeof(WireHeader); i < bad_meta.size(); ++i) bad_meta[i] = 0xff;
  transport.SendBytes(server, bad_meta, payload, nullptr);

  // The same with payloads large enough for a rendezvous, the ring or a description, or, over TCP
  // alone, pieces that a server sums as they come for a good push: dropped as well.
  constexpr size_t kBig = 100000;  // 400 KB of floats: more than one piece
  const Key k9 = OwnKey(session, 9);
  const int server9 = 1 + session.ServerOfKey(k9);
  kv.Wait(kv.Push({k9}, std::vector<float>(kBig, 1.f)));
  Message big = RawPush(session, catcher.id(), {k9}, std::vector<float>(kBig, 100.f));
  header = EncodeHeader(big);
  payload = PayloadFragments(big);
  transport.SendBytes(server9, std::vector<uint8_t>(header.begin(), header.begin() + 5), payload,
                      nullptr);
  bad_magic = header;
  bad_magic[1] ^= 0x55;
  transport.SendBytes(server9, bad_magic, payload, nullptr);
  bad_meta = header;
  for (size_t i = sizeof(WireHeader); i < bad_meta.size(); ++i) bad_meta[i] = 0xff;
  transport.SendBytes(server9, bad_meta, payload, nullptr);
  // A large push to a key held with another length is refused, naming both.
  transport.Send(server, RawPush(session, catcher.id(), {k7}, std::vector<float>(kBig, 1.f)),
                 nullptr);
  EXPECT_CONTAINS(catcher.Next(),
                  "pushed 100000 values, but server rank " + std::to_string(server) + " holds 1");

  // None of it changed the keys, and the server still serves.
  ExpectStillServes(kv, k7, 1.5f);
  kv.Wait(kv.Push({k7}, {1.0f}));
  ExpectStillServes(kv, k7, 2.5f);
  kv.Wait(kv.Push({k9}, std::vector<float>(kBig, 2.f)));
  std::vector<float> out;
  kv.Wait(kv.Pull({k9}, &out));
  EXPECT_EQ(out, std::vector<float>(kBig, 3.f)) << "key " << k9;
}

namespace {

// Key k's j-th value: exact in float for the keys used.
float ValueAt(Key k, int j) { return float(k % 1000) * 1000 + float(j); }

// Server 1's keys get `command` more values than server 0's; everything else is the same.
int LengthOf(int server_index, int command) { return 8192 + (server_index == 1 ? command : 0); }

}  // namespace

void PullsWithChangingLengths(Session& session) {
  if (session.num_servers() < 2) return;
  if (session.is_server()) {
    const int index = session.role_index();
    KVServer<float> server(
        session, [index](const RequestMeta& meta, const KVRequest<float>& req, KVServer<float>* s) {
          KVPairs<float> res;
          if (meta.pull) {
            for (Key k : req.keys) {
              res.keys.push_back(k);
              int len = LengthOf(index, meta.user_command);
              res.lens.push_back(len);
              for (int j = 0; j < len; ++j) res.vals.push_back(ValueAt(k, j));
            }
          }
          s->Response(meta, std::move(res));
        });
    session.Finalize();
    return;
  }
  if (!session.is_worker()) return;
  // Keys of server 1 first, then of server 0: when server 1's lengths change, server 0's values
  // (received in place) sit at the wrong offsets.
  std::vector<Key> keys;
  for (int server : {1, 0}) {
    int found = 0;
    for (Key k = keys.empty() ? 1 : keys.back() + 1; found < 3; ++k) {
      if (session.ServerOfKey(k) == server) {
        keys.push_back(k);
        ++found;
      }
    }
  }
  KVWorker<float> kv(session);
  for (int command : {0, 0, 5, 5, 0}) {
    std::vector<float> vals;
    vals.reserve(1 << 20);  // resizing in place: a reallocation would carry misplaced data along
    std::vector<int> lens;
    kv.Wait(kv.Pull(keys, &vals, &lens, command));
    std::vector<float> expected;
    std::vector<int> expected_lens;
    for (Key k : keys) {
      int len = LengthOf(session.ServerOfKey(k), command);
      expected_lens.push_back(len);
      for (int j = 0; j < len; ++j) expected.push_back(ValueAt(k, j));
    }
    ASSERT_EQ(lens, expected_lens) << "command " << command;
    ASSERT_TRUE(vals == expected) << "command " << command << ": values out of place";
  }
}

void RequestsBeforeServerStarts(Session& session) {
  if (session.is_server()) {
    // Long enough for every worker's first push to arrive before the handler exists.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    KVServer<float> server(session);
    session.Finalize();
    return;
  }
  if (!session.is_worker()) return;
  KVWorker<float> kv(session);
  std::vector<Key> keys;
  for (Key k = 0; k < 32; ++k) keys.push_back(OwnKey(session, k));
  std::vector<float> vals(keys.size(), 2.5f);
  int ts = kv.Push(keys, vals);
  kv.Wait(ts);
  std::vector<float> out;
  kv.Wait(kv.Pull(keys, &out));
  EXPECT_EQ(out, vals);
}

}  // namespace testing
}  // namespace pacer
