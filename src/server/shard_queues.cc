#include "server/shard_queues.h"

#include <unordered_set>
#include <utility>

namespace pacer {
namespace detail {
namespace {

// Requests up to this size run on the receiving thread when their shard is idle: handing them to
// the shard's thread costs a wake-up and, on another core, a cache miss per line of data the
// receiving thread just wrote, more than such a sum takes. Larger ones go to the shard, so that
// receiving goes on meanwhile. Either way a shard runs one task at a time, in arrival order.
constexpr size_t kInlineBytes = 1 << 20;

}  // namespace

ShardQueues::ShardQueues(int count, bool inline_small, std::function<void(const ShardTask&)> run)
    : inline_small_(inline_small), run_(std::move(run)) {
  for (int i = 0; i < count; ++i) shards_.push_back(std::make_unique<Shard>());
}

ShardQueues::~ShardQueues() { Stop(); }

void ShardQueues::Start() {
  for (size_t i = 0; i < shards_.size(); ++i) {
    shards_[i]->thread = std::thread([this, i] { RunShard(static_cast<int>(i)); });
  }
}

void ShardQueues::Stop() {
  for (auto& shard : shards_) {
    {
      std::lock_guard<std::mutex> lock(shard->mu);
      shard->stopping = true;
    }
    shard->ready.notify_all();
    if (shard->thread.joinable()) shard->thread.join();
  }
}

int64_t ShardQueues::Queued() {
  int64_t queued = 0;
  for (auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    queued += static_cast<int64_t>(shard->queue.size());
  }
  return queued;
}

void ShardQueues::RunOnEveryShard(const std::function<void(int shard)>& fn) {
  std::mutex mu;
  std::condition_variable done;
  int remaining = size();
  for (int shard = 0; shard < size(); ++shard) {
    RunOnShard(shard, [&](int s) {
      fn(s);
      std::lock_guard<std::mutex> lock(mu);
      if (--remaining == 0) done.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  done.wait(lock, [&] { return remaining == 0; });
}

void ShardQueues::RunOnShard(int shard, std::function<void(int)> fn, bool ahead) {
  ShardTask task;
  task.meta.shard = shard;
  task.control = std::move(fn);
  Dispatch(std::move(task), ahead);
}

bool ShardQueues::TryHold(int index) {
  Shard& shard = *shards_[index];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (shard.busy || !shard.queue.empty()) return false;
  shard.busy = true;
  return true;
}

void ShardQueues::Release(int index) {
  Shard& shard = *shards_[index];
  std::lock_guard<std::mutex> lock(shard.mu);
  shard.busy = false;
  if (!shard.queue.empty()) shard.ready.notify_one();
}

void ShardQueues::Dispatch(ShardTask task, bool ahead) {
  const int index = task.meta.shard;
  Shard& shard = *shards_[index];
  const bool small = task.data.values.size() <= kInlineBytes && inline_small_;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    if (!small || shard.busy || !shard.queue.empty()) {
      if (ahead) {
        shard.queue.push_front(std::move(task));
      } else {
        shard.queue.push_back(std::move(task));
      }
      shard.ready.notify_one();
      return;
    }
    shard.busy = true;
  }
  Run(task);
  Release(index);
}

void ShardQueues::ServeQueued(int index, const std::function<bool(Key)>& moving) {
  Shard& shard = *shards_[index];
  std::vector<ShardTask> taken;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    std::vector<bool> take(shard.queue.size(), false);
    std::unordered_set<Key> shared;  // keys of the tasks taken so far, scanning backwards
    bool take_all = false;           // a task taken shares every key (it has none of its own)
    for (size_t i = shard.queue.size(); i-- > 0;) {
      const ShardTask& task = shard.queue[i];
      const Key* keys = task.data.keys.as<Key>();
      const size_t n = task.data.keys.count<Key>();
      const bool keyless = task.control || task.sync_switch;
      take[i] = take_all || (keyless && !shared.empty());
      for (size_t k = 0; k < n && !take[i]; ++k) {
        take[i] = moving(keys[k]) || shared.count(keys[k]) > 0;
      }
      if (!take[i]) continue;
      if (keyless) take_all = true;
      shared.insert(keys, keys + n);
    }
    std::deque<ShardTask> kept;
    for (size_t i = 0; i < shard.queue.size(); ++i) {
      if (take[i]) {
        taken.push_back(std::move(shard.queue[i]));
      } else {
        kept.push_back(std::move(shard.queue[i]));
      }
    }
    shard.queue.swap(kept);
  }
  for (const ShardTask& task : taken) Run(task);
}

void ShardQueues::Run(const ShardTask& task) {
  if (task.control) {
    task.control(task.meta.shard);
  } else {
    run_(task);
  }
}

void ShardQueues::RunShard(int index) {
  Shard& shard = *shards_[index];
  std::unique_lock<std::mutex> lock(shard.mu);
  for (;;) {
    shard.ready.wait(lock, [&] {
      return (shard.stopping && !shard.busy) || (!shard.busy && !shard.queue.empty());
    });
    if (shard.queue.empty()) return;
    ShardTask task = std::move(shard.queue.front());
    shard.queue.pop_front();
    shard.busy = true;
    lock.unlock();
    Run(task);
    lock.lock();
    shard.busy = false;
  }
}

}  // namespace detail
}  // namespace pacer
