#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pacer/detail/sharded_server.h"

namespace pacer {
namespace detail {

// The scheduler's request to switch synchronization mode (two phases, see SyncControl).
struct SyncSwitchRequest {
  bool commit = false;  // false: prepare
  std::string mode;     // commit: the new mode, as --sync spells it
  int64_t first_clock = 0;
};

// What one shard runs: a request's part, a part of a mode switch, or a control (a migration's
// step, a query) in place of a handler.
struct ShardTask {
  RequestMeta meta;  // meta.shard: the shard
  RequestData data;
  std::optional<SyncSwitchRequest> sync_switch;
  std::function<void(int shard)> control;
};

// A server's shards as threads and queues (RequestShards' pool): each shard runs one task at a
// time, in the order it got them, on its own thread, or at once on the caller's when the shard
// is idle and the task small. Thread-safe.
class ShardQueues {
 public:
  // `run`: runs a request's or a switch's task (controls run themselves); `inline_small`: whether
  // small tasks may run on the caller's thread (not while a capacity is emulated).
  ShardQueues(int count, bool inline_small, std::function<void(const ShardTask&)> run);
  // Stops every shard's thread after the task it runs (Stop).
  ~ShardQueues();
  ShardQueues(const ShardQueues&) = delete;
  ShardQueues& operator=(const ShardQueues&) = delete;

  void Start();
  // Lets each thread run what its queue holds, then ends it.
  void Stop();
  int size() const { return static_cast<int>(shards_.size()); }
  // Tasks waiting in the queues.
  int64_t Queued();

  // Runs `task` on its shard: at once when it is small and the shard idle, else queued (at the
  // front when `ahead`).
  void Dispatch(ShardTask task, bool ahead = false);
  // Runs `fn` on `shard`, in order with the tasks queued there (first when `ahead`), without
  // waiting for it.
  void RunOnShard(int shard, std::function<void(int)> fn, bool ahead = false);
  // Runs `fn` on every shard, in order with the tasks queued there, and returns when all have
  // run. Not from a task.
  void RunOnEveryShard(const std::function<void(int shard)>& fn);
  // On shard `index`'s thread, from a task of its own: takes out of the queue the tasks that
  // touch keys `moving` selects, and every earlier task that shares a key with one taken (a task
  // without keys, a switch or a control, shares them all), and runs them now, in their order.
  // Tasks left behind touch none of the keys of tasks taken after them, so no key's requests
  // change order.
  void ServeQueued(int index, const std::function<bool(Key)>& moving);

  // Holds an idle shard with nothing queued for work done elsewhere (an in-place sum), until
  // Release; false if the shard is busy or has tasks waiting (they keep their order).
  bool TryHold(int shard);
  // Ends a shard's task or hold: it may run the next one.
  void Release(int shard);

 private:
  struct Shard {
    std::thread thread;
    std::mutex mu;
    std::condition_variable ready;
    std::deque<ShardTask> queue;
    bool busy = false;  // a task of this shard is running (on its thread or inline)
    bool stopping = false;
  };

  void Run(const ShardTask& task);
  void RunShard(int index);

  const bool inline_small_;
  const std::function<void(const ShardTask&)> run_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace detail
}  // namespace pacer
