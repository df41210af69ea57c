// RequestShards' shard threads (request_shards.h): how a task reaches its shard (run at once when
// the shard is idle and the task small, else queued for the shard's thread) and runs there, timed
// for the service reports.
#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "server/pending_response.h"
#include "server/request_shards.h"

namespace pacer {
namespace detail {
namespace {

// Requests up to this size run on the receiving thread when their shard is idle: handing them to
// the shard's thread costs a wake-up and, on another core, a cache miss per line of data the
// receiving thread just wrote, more than such a sum takes. Larger ones go to the shard, so that
// receiving goes on meanwhile. Either way a shard runs one task at a time, in arrival order.
constexpr size_t kInlineBytes = 1 << 20;

}  // namespace

void RequestShards::RunOnEveryShard(const std::function<void(int shard)>& fn) {
  std::mutex mu;
  std::condition_variable done;
  int remaining = num_shards();
  for (int shard = 0; shard < num_shards(); ++shard) {
    RunOnShard(shard, [&](int s) {
      fn(s);
      std::lock_guard<std::mutex> lock(mu);
      if (--remaining == 0) done.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  done.wait(lock, [&] { return remaining == 0; });
}

int64_t RequestShards::Queued() {
  int64_t queued = 0;
  for (auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    queued += static_cast<int64_t>(shard->queue.size());
  }
  return queued;
}

void RequestShards::RunOnShard(int shard, std::function<void(int)> fn, bool ahead) {
  Task task;
  task.meta.shard = shard;
  task.control = std::move(fn);
  Dispatch(std::move(task), ahead);
}

void RequestShards::Release(Shard& shard) {
  std::lock_guard<std::mutex> lock(shard.mu);
  shard.busy = false;
  if (!shard.queue.empty()) shard.ready.notify_one();
}

void RequestShards::Dispatch(Task task, bool ahead) {
  Shard& shard = *shards_[task.meta.shard];
  const bool small = task.data.values.size() <= kInlineBytes && !injected_.emulates_rate();
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
  Release(shard);
}

void RequestShards::Run(const Task& task) {
  if (task.control) {
    task.control(task.meta.shard);
    return;
  }
  Shard& shard = *shards_[task.meta.shard];
  // A request's work in bytes, counting its fixed cost (a few microseconds, whatever it
  // carries) as kRequestWorkBytes: else small requests would look slow per byte.
  const size_t bytes =
      std::max(ServiceReporter::kRequestWorkBytes, task.data.keys.size() + task.data.values.size());
  const double start = service_clock_();
  const InjectedService::Delay delay = injected_.Apply(bytes, shard.seconds_per_byte);
  const double handler_start = delay.spun ? service_clock_() : start;
  try {
    if (task.sync_switch) {
      switch_handler_(task.meta, *task.sync_switch);
    } else {
      handler_(task.meta, task.data);
    }
  } catch (const std::exception& e) {
    task.meta.response->AddPart(task.meta.part, {}, {}, {}, e.what());
  }
  const double end = service_clock_();
  // An emulated capacity's occupancy is the service time; else the measured time, spin
  // included.
  reporter_.RecordRequest(delay.emulated_s > 0 ? delay.emulated_s : end - start,
                          static_cast<int64_t>(bytes));
  const double per_byte = (end - handler_start) / static_cast<double>(bytes);
  shard.seconds_per_byte = shard.seconds_per_byte > 0
                               ? shard.seconds_per_byte + 0.1 * (per_byte - shard.seconds_per_byte)
                               : per_byte;
}

void RequestShards::RunShard(int index) {
  Shard& shard = *shards_[index];
  std::unique_lock<std::mutex> lock(shard.mu);
  for (;;) {
    shard.ready.wait(lock, [&] {
      return (shard.stopping && !shard.busy) || (!shard.busy && !shard.queue.empty());
    });
    if (shard.queue.empty()) return;
    Task task = std::move(shard.queue.front());
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
