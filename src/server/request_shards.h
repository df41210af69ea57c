#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/buffer_pool.h"
#include "pacer/detail/sharded_server.h"
#include "ps/messages/message.h"
#include "ps/node/node.h"
#include "server/injected_service.h"
#include "server/service_reporter.h"
#include "server/shard_queues.h"

namespace pacer {
namespace detail {

class RangeMigration;

// One server's requests for one app, run on shards: it validates each request, splits it by
// shard (a key always lands on the same shard) and runs the parts on the shards' threads, one
// at a time per shard and in arrival order, then merges the parts' answers into one response. A
// request for keys this server no longer owns is redirected, or held when it was routed by a table
// newer than this server's (its keys are on their way here). It also takes the scheduler's mode
// switches and key-range migrations for the app, in order with its requests.
class RequestShards {
 public:
  using Handler = ShardedServer::Handler;
  using InPlaceTargets = ShardedServer::InPlaceTargets;
  // Runs on every shard, in order with its requests; each answers with Respond.
  using SwitchHandler = std::function<void(const RequestMeta&, const SyncSwitchRequest&)>;
  // Key-range migration (SAS). ExportHandler removes from one shard the keys `moving` selects and
  // returns each one's whole state; ImportHandler installs such records on one shard. Both run on
  // the shard's thread, in order with its requests. Without them the server refuses to migrate.
  using MovedKey = std::pair<Key, Buffer>;
  using ExportHandler =
      std::function<std::vector<MovedKey>(int shard, const std::function<bool(Key)>& moving)>;
  using ImportHandler = std::function<void(int shard, const std::vector<MovedKey>& keys)>;

  // Throws Error unless `node` is a server.
  RequestShards(Node& node, int app_id, size_t value_size, Handler handler);
  ~RequestShards();
  RequestShards(const RequestShards&) = delete;
  RequestShards& operator=(const RequestShards&) = delete;

  // Call these before Start.
  void SetSwitchHandler(SwitchHandler handler) { switch_handler_ = std::move(handler); }
  void SetMigrationHandlers(ExportHandler export_keys, ImportHandler import_keys);
  void SetInPlaceSum(InPlaceTargets targets) { in_place_targets_ = std::move(targets); }
  // Starts handling requests, those queued before included.
  void Start();

  int64_t pushes_summed_in_place() const { return summed_in_place_.load(); }
  // Runs `fn` on every shard, in order with the requests queued there, and returns when all have
  // run. Not from a handler.
  void RunOnEveryShard(const std::function<void(int shard)>& fn) { queues_.RunOnEveryShard(fn); }
  // Runs `fn` on `shard`, in order with the requests queued there, without waiting for it.
  void RunOnShard(int shard, std::function<void(int)> fn) {
    queues_.RunOnShard(shard, std::move(fn));
  }
  int num_shards() const { return queues_.size(); }
  Node& node() { return node_; }
  Buffer Allocate(size_t bytes, uint8_t** writable) { return pool_.Allocate(bytes, writable); }
  void AddKeys(int64_t keys) { reporter_.AddKeys(keys); }

  // Answers one part of a request: see ShardedServer.
  void Respond(const RequestMeta& meta, Buffer keys, std::vector<Buffer> values, Buffer lens,
               const ResponseStamp& stamp = {});
  void RespondError(const RequestMeta& meta, const std::string& error);
  // Answers a part that can no longer be served here (a key of it moved to another server while
  // it waited): the worker resends the request to the new owner, only its pull if the push was
  // applied (a push-pull).
  void Redirect(const RequestMeta& meta);

 private:
  // Whether this server owns every key of a request by its routing table (see the class comment).
  enum class Ownership { kOwned, kHold, kRedirect };
  // The scheduler moves one range at a time and every server hears of each move: a live peer is
  // never this many tables ahead.
  static constexpr int64_t kMaxEpochsAhead = 1000;

  int ShardOf(Key key) const;
  // A request's part or a switch's, on its shard's thread (or inline): runs the handler and
  // times it for the service reports.
  void Serve(const ShardTask& task);
  // `vals_bytes`: the values' size, whether they came with the message or went to a consumer.
  std::string Validate(const Message& msg, bool push, size_t vals_bytes) const;
  Ownership Owns(const Key* keys, size_t n, int64_t epoch) const;

  // On the receiving thread.
  void OnRequest(Message&& msg);
  void OnSwitch(const Message& msg);
  // A newer table arrived: requests held for it are routed again.
  void ReleaseHeld();
  // What a handler learns of a request of `parts` parts, besides its keys and values.
  RequestMeta MetaOf(const Message& msg, int parts);
  // Tells the key-range telemetry (where on) of a push of `values_bytes` of values.
  void CountPushLoad(const Message& msg, size_t values_bytes);
  // A consumer that sums the values of push `msg` (its header) into the store as they arrive,
  // holding the keys' shard until it goes; null where the push must go the usual way: another
  // command, input the usual path rejects, keys not all owned here or not on one shard, the
  // shard busy (its queue keeps its order), injected faults, or keys the store cannot take in
  // place.
  std::shared_ptr<PayloadConsumer> InPlaceSumFor(const Message& msg);
  // A push whose values InPlaceSumFor's consumer summed as they came: answered as the handler
  // would; the shard is released when `msg` goes.
  void AnswerSummedPush(const Message& msg);

  Node& node_;
  const int app_id_;
  const size_t value_size_;
  Handler handler_;
  SwitchHandler switch_handler_;
  InPlaceTargets in_place_targets_;
  std::atomic<int64_t> summed_in_place_{0};
  std::unique_ptr<RangeMigration> migration_;
  std::vector<Message> held_;  // requests routed by a table newer than this server's
  InjectedService injected_;
  ShardQueues queues_;                    // before the reporter, which counts what they hold
  std::vector<double> seconds_per_byte_;  // by shard: measured service time, a moving mean
  BufferPool pool_;  // for stored values and the values of requests split over shards
  ServiceReporter reporter_;
  // Service is measured in the thread's CPU time, which preemption does not inflate, where ranks
  // share cores and where faults are emulated (they are defined in CPU time). Where every busy
  // rank has a core the wall clock says the same, and the CPU clock is a system call, read twice
  // per request.
  double (*const service_clock_)();
  bool started_ = false;
};

}  // namespace detail
}  // namespace pacer
