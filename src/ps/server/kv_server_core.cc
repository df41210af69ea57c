#include "pacer/detail/kv_server_core.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include "pacer/error.h"
#include "ps/buffer_pool.h"
#include "ps/request_validation.h"
#include "ps/server/in_place_sum.h"
#include "ps/server/injected_service.h"
#include "ps/server/pending_response.h"
#include "ps/server/range_migration.h"
#include "ps/server/service_reporter.h"
#include "ps/server/shard_parts.h"
#include "ps/session_core.h"
#include "ps/str_cat.h"

namespace pacer {
namespace detail {
namespace {

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

class KVServerCore::Impl {
 public:
  Impl(SessionCore& session, int app_id, size_t value_size, Handler handler, int shards)
      : session_(session), app_id_(app_id), value_size_(value_size), handler_(std::move(handler)) {
    for (int i = 0; i < shards; ++i) shards_.push_back(std::make_unique<Shard>());
  }

  ~Impl() {
    if (started_) session_.DetachServer(app_id_);
    for (auto& shard : shards_) {
      {
        std::lock_guard<std::mutex> lock(shard->mu);
        shard->stopping = true;
      }
      shard->ready.notify_all();
      if (shard->thread.joinable()) shard->thread.join();
    }
  }

  void Start() {
    for (size_t i = 0; i < shards_.size(); ++i) {
      shards_[i]->thread = std::thread([this, i] { RunShard(static_cast<int>(i)); });
    }
    started_ = true;
    SessionCore::Consumers consumers;
    if (in_place_targets_) {
      consumers = [this](const Message& msg) { return InPlaceSumFor(msg); };
    }
    session_.AttachServer(
        app_id_, [this](Message&& msg) { OnRequest(std::move(msg)); }, std::move(consumers));
  }

  void SetSwitchHandler(SwitchHandler handler) { switch_handler_ = std::move(handler); }
  void SetInPlaceSum(InPlaceTargets targets) { in_place_targets_ = std::move(targets); }
  int64_t pushes_summed_in_place() const { return summed_in_place_.load(); }
  void SetMigrationHandlers(ExportHandler export_keys, ImportHandler import_keys) {
    RangeMigration::Shards shards{
        num_shards(), [this](Key key) { return ShardOf(key); },
        [this](int shard, std::function<void(int)> fn) {
          RunOnShard(shard, std::move(fn), /*ahead=*/true);
        },
        [this](int shard, const std::function<bool(Key)>& moving) { ServeQueued(shard, moving); }};
    migration_ = std::make_unique<RangeMigration>(session_, app_id_, std::move(shards),
                                                  std::move(export_keys), std::move(import_keys));
  }

  void RunOnEveryShard(const std::function<void(int shard)>& fn) {
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
  int num_shards() const { return static_cast<int>(shards_.size()); }
  ServiceReporter& reporter() { return reporter_; }

  int64_t Queued() {
    int64_t queued = 0;
    for (auto& shard : shards_) {
      std::lock_guard<std::mutex> lock(shard->mu);
      queued += static_cast<int64_t>(shard->queue.size());
    }
    return queued;
  }
  SessionCore& session() { return session_; }
  BufferPool& pool() { return pool_; }

 private:
  struct Task {
    RequestMeta meta;
    RequestData data;
    std::optional<SyncSwitchRequest> sync_switch;
    std::function<void(int shard)> control;  // runs instead of a handler (migration, queries)
  };
  struct Shard {
    std::thread thread;
    std::mutex mu;
    std::condition_variable ready;
    std::deque<Task> queue;
    bool busy = false;            // a task of this shard is running (on its thread or inline)
    double seconds_per_byte = 0;  // measured service time, a moving mean (used by the runner)
    bool stopping = false;
  };

  // Requests up to 1 MiB run on the receiving thread when their shard is idle: handing them to the
  // shard's thread costs a wake-up (tens of microseconds) and, on another core, a cache miss per
  // line of data the receiving thread just wrote, more than a sum of 1 MiB takes. Larger ones go
  // to the shard, so that receiving goes on meanwhile. Either way a shard runs one task at a time,
  // in arrival order. 1 MiB pushes, window 8, 64 KiB against 1 MiB: 2 servers + 2 workers
  // 6.3-9.0 against 8.3-11.3 GB/s, over TCP 3.2-3.4 against 3.2-5.1; 16 MiB pushes inline:
  // 6.8-7.3 against 10.9-11.9.
  static constexpr size_t kInlineBytes = 1 << 20;

  int ShardOf(Key key) const { return ShardOfKey(key, num_shards()); }

  // `vals_bytes`: the values' size, whether they came with the message or went to a consumer.
  std::string Validate(const Message& msg, bool push, size_t vals_bytes) const {
    if (msg.meta.value_size() != static_cast<int>(value_size_) && (push || msg.meta.value_size())) {
      return StrCat("values of ", msg.meta.value_size(), " bytes, but the KVServer of app ",
                    app_id_, " holds values of ", value_size_, " bytes");
    }
    if (!push && vals_bytes > 0) return StrCat("a pull carries ", vals_bytes, " bytes of values");
    return ValidateKeyValues(msg.keys.as<Key>(), msg.num_keys(), msg.lens.as<int32_t>(),
                             msg.lens.count<int32_t>(), push ? vals_bytes / value_size_ : 0, push);
  }

  // A mode switch goes to every shard, in order with the requests already queued there.
  void OnSwitch(const Message& msg) {
    if (!switch_handler_) {
      session_.RejectRequest(msg.meta, StrCat("the server of app ", app_id_,
                                              " has no synchronization engine to switch"));
      return;
    }
    if (msg.meta.sender() != 0) {
      session_.RejectRequest(msg.meta, "only the scheduler (rank 0) switches modes");
      return;
    }
    RequestMeta meta;
    meta.sender = msg.meta.sender();
    meta.app_id = app_id_;
    meta.timestamp = msg.meta.request_id();
    meta.response =
        std::make_shared<PendingResponse>(msg.meta, session_, value_size_, num_shards());
    SyncSwitchRequest request{msg.meta.command() == proto::SYNC_COMMIT, msg.meta.sync_mode(),
                              msg.meta.clock()};
    for (int shard = 0; shard < num_shards(); ++shard) {
      meta.shard = meta.part = shard;
      Dispatch({meta, {}, request, nullptr});
    }
  }

  void RunOnShard(int shard, std::function<void(int)> fn, bool ahead = false) {
    Task task;
    task.meta.shard = shard;
    task.control = std::move(fn);
    Dispatch(std::move(task), ahead);
  }

  // On shard `index`'s thread, from a task of its own: takes out of the queue the requests that
  // touch keys `moving` selects, and every earlier task that shares a key with one taken (a
  // task without keys, a switch or a control, shares them all), and runs them now, in their
  // order. Tasks left behind touch none of the keys of tasks taken after them, so no key's
  // requests change order.
  void ServeQueued(int index, const std::function<bool(Key)>& moving) {
    Shard& shard = *shards_[index];
    std::vector<Task> taken;
    {
      std::lock_guard<std::mutex> lock(shard.mu);
      std::vector<bool> take(shard.queue.size(), false);
      std::unordered_set<Key> shared;  // keys of the tasks taken so far, scanning backwards
      bool take_all = false;           // a task taken shares every key (it has none of its own)
      for (size_t i = shard.queue.size(); i-- > 0;) {
        const Task& task = shard.queue[i];
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
      std::deque<Task> kept;
      for (size_t i = 0; i < shard.queue.size(); ++i) {
        if (take[i]) {
          taken.push_back(std::move(shard.queue[i]));
        } else {
          kept.push_back(std::move(shard.queue[i]));
        }
      }
      shard.queue.swap(kept);
    }
    for (const Task& task : taken) Run(task);
  }

  // Whether this server owns every key of a request by its routing table; if not, the request is
  // held when it was routed by a newer table than this server knows (the keys are on their way
  // here), else the worker is told where they are now.
  enum class Ownership { kOwned, kHold, kRedirect };
  Ownership Owns(const Key* keys, size_t n, int64_t epoch) const {
    const std::shared_ptr<const Router> table = session_.routing();
    const int me = session_.rank() - 1;
    for (size_t i = 0; i < n; ++i) {
      if (table->ServerOf(keys[i]) != me) {
        return epoch > table->epoch() ? Ownership::kHold : Ownership::kRedirect;
      }
    }
    return Ownership::kOwned;
  }

  // A newer table arrived: requests held for it are routed again. (On the receiving thread, like
  // every request.)
  void ReleaseHeld() {
    std::vector<Message> held;
    held.swap(held_);
    for (Message& msg : held) OnRequest(std::move(msg));
  }

  void OnRequest(Message&& msg) {
    const proto::Command command = msg.meta.command();
    if (command == proto::SYNC_PREPARE || command == proto::SYNC_COMMIT) {
      OnSwitch(msg);
      return;
    }
    if (command == proto::MIGRATE || command == proto::MIGRATE_STATE ||
        command == proto::ROUTING_UPDATE) {
      if (command != proto::ROUTING_UPDATE) {
        if (!migration_) {
          session_.RejectRequest(
              msg.meta, StrCat("the server of app ", app_id_, " has no key state to migrate"));
          return;
        }
        if (command == proto::MIGRATE) {
          migration_->OnMigrate(msg);
        } else {
          migration_->OnState(msg);
        }
      }
      ReleaseHeld();
      return;
    }
    if (command != proto::PUSH && command != proto::PULL && command != proto::PUSH_PULL) {
      session_.RejectRequest(msg.meta, "not a key-value request");
      return;
    }
    const bool push = command != proto::PULL;
    if (msg.consumer) {
      AnswerSummedPush(msg);
      return;
    }
    std::string error = Validate(msg, push, msg.vals_bytes());
    if (!error.empty()) {
      session_.RejectRequest(msg.meta, error);
      return;
    }
    const Key* keys = msg.keys.as<Key>();
    const size_t n = msg.num_keys();
    switch (Owns(keys, n, msg.meta.epoch())) {
      case Ownership::kOwned:
        break;
      case Ownership::kHold:
        held_.push_back(std::move(msg));
        return;
      case Ownership::kRedirect:
        session_.RedirectRequest(msg.meta, false);
        return;
    }
    Buffer values = msg.vals_buffer();
    if (push) CountPushLoad(msg, values.size());
    std::vector<ShardPart> parts =
        SplitByShard(msg.keys, msg.lens, values, push, value_size_, num_shards(), pool_);
    RequestMeta meta = MetaOf(msg, static_cast<int>(parts.size()));
    for (size_t p = 0; p < parts.size(); ++p) {
      meta.shard = parts[p].shard;
      meta.part = static_cast<int>(p);
      Dispatch({meta, std::move(parts[p].data), std::nullopt, nullptr});
    }
  }

  // Tells the key-range telemetry (where on) of a push of `values_bytes` of values.
  void CountPushLoad(const Message& msg, size_t values_bytes) {
    if (!reporter_.range_load()) return;
    reporter_.range_load()->AddPush(*session_.routing(), msg.keys.as<Key>(), msg.num_keys(),
                                    msg.lens.as<int32_t>(), value_size_, values_bytes);
  }

  // What a handler learns of a request of `parts` parts, besides its keys and values.
  RequestMeta MetaOf(const Message& msg, int parts) {
    RequestMeta meta;
    meta.sender = msg.meta.sender();
    meta.app_id = app_id_;
    meta.timestamp = msg.meta.request_id();
    meta.push = msg.meta.command() != proto::PULL;
    meta.pull = msg.meta.command() != proto::PUSH;
    meta.user_command = msg.meta.user_command();
    meta.clock = msg.meta.clock();
    meta.version = msg.meta.version();
    meta.weight = msg.meta.has_weight() ? msg.meta.weight() : 1;
    meta.init = msg.meta.init();
    meta.after_own_push = msg.meta.after_own_push();
    meta.state = msg.meta.state();
    meta.response = std::make_shared<PendingResponse>(msg.meta, session_, value_size_, parts);
    return meta;
  }

  // A consumer that sums the values of push `msg` (its header) into the store as they arrive,
  // holding the keys' shard until it goes; null where the push must go the usual way: another
  // command, input the usual path rejects, keys not all owned here or not on one shard, the
  // shard busy (its queue keeps its order), injected faults, or keys the store cannot take in
  // place.
  std::shared_ptr<PayloadConsumer> InPlaceSumFor(const Message& msg) {
    const Key* keys = msg.keys.as<Key>();
    const size_t n = msg.num_keys();
    if (msg.meta.command() != proto::PUSH || n == 0 || injected_.any_fault() ||
        !Validate(msg, true, msg.consumed_bytes).empty() ||
        Owns(keys, n, msg.meta.epoch()) != Ownership::kOwned) {
      return nullptr;
    }
    const int shard = ShardOf(keys[0]);
    for (size_t i = 1; i < n; ++i) {
      if (ShardOf(keys[i]) != shard) return nullptr;
    }
    std::vector<uint64_t> offsets =
        KeyOffsets(msg.lens.as<int32_t>(), n, value_size_, msg.consumed_bytes);
    std::vector<size_t> lengths(n);
    for (size_t i = 0; i < n; ++i) lengths[i] = (offsets[i + 1] - offsets[i]) / value_size_;
    Shard& held = *shards_[shard];
    {
      std::lock_guard<std::mutex> lock(held.mu);
      if (held.busy || !held.queue.empty()) return nullptr;
      held.busy = true;
    }
    std::vector<float*> targets;
    if (!in_place_targets_(shard, keys, n, lengths, &targets)) {
      Release(held);
      return nullptr;
    }
    return std::make_shared<InPlaceSum>(session_.reducer(), std::move(targets), std::move(offsets),
                                        [this, &held] { Release(held); });
  }

  // A push whose values InPlaceSumFor's consumer summed as they came: answered as the handler
  // would; the shard is released when `msg` goes.
  void AnswerSummedPush(const Message& msg) {
    auto* sum = dynamic_cast<const InPlaceSum*>(msg.consumer.get());
    if (sum == nullptr) {
      session_.RejectRequest(msg.meta, "its values went to a consumer of another server");
      return;
    }
    CountPushLoad(msg, msg.consumed_bytes);
    reporter_.RecordRequest(sum->seconds(), static_cast<int64_t>(msg.consumed_bytes));
    reporter_.RecordResponse(0);
    MetaOf(msg, 1).response->AddPart(0, {}, {}, {}, "");
    summed_in_place_.fetch_add(1);
  }

  // Ends a shard's task: its thread may run the next one.
  void Release(Shard& shard) {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.busy = false;
    if (!shard.queue.empty()) shard.ready.notify_one();
  }

  // Runs a task inline when it is small and its shard idle, else queues it for the shard (at the
  // front when `ahead`).
  void Dispatch(Task task, bool ahead = false) {
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

  void Run(const Task& task) {
    if (task.control) {
      task.control(task.meta.shard);
      return;
    }
    Shard& shard = *shards_[task.meta.shard];
    // A request's work in bytes, counting its fixed cost (a few microseconds, whatever it
    // carries) as kRequestWorkBytes: else small requests would look slow per byte.
    const size_t bytes = std::max(ServiceReporter::kRequestWorkBytes,
                                  task.data.keys.size() + task.data.values.size());
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
    shard.seconds_per_byte =
        shard.seconds_per_byte > 0
            ? shard.seconds_per_byte + 0.1 * (per_byte - shard.seconds_per_byte)
            : per_byte;
  }

  void RunShard(int index) {
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

  SessionCore& session_;
  const int app_id_;
  const size_t value_size_;
  Handler handler_;
  SwitchHandler switch_handler_;
  InPlaceTargets in_place_targets_;
  std::atomic<int64_t> summed_in_place_{0};
  std::unique_ptr<RangeMigration> migration_;
  std::vector<Message> held_;  // requests routed by a table newer than this server's
  std::vector<std::unique_ptr<Shard>> shards_;
  BufferPool pool_;  // for stored values and the values of requests split over shards
  ServiceReporter reporter_{session_, [this] { return Queued(); }};
  InjectedService injected_{session_};
  // Service is measured in the thread's CPU time, which preemption does not inflate, where ranks
  // share cores, and where faults are emulated (they are defined in CPU time). Where every busy
  // rank has a core, the wall clock says the same at a fiftieth of the cost: the CPU clock is a
  // system call, 1.3 us on this VM, read twice per request.
  double (*const service_clock_)() = session_.ranks_fit_cores() && session_.faults().empty()
                                         ? &WallSeconds
                                         : &ThreadCpuSeconds;
  bool started_ = false;
};

namespace {

int DefaultShards(const Config& config) {
  if (config.server_threads > 0) return config.server_threads;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::min(4, cores));
}

}  // namespace

KVServerCore::KVServerCore(Session& session, int app_id, size_t value_size, Handler handler) {
  if (!session.is_server()) {
    throw Error("rank " + std::to_string(session.rank()) + " is a " + RoleName(session.role()) +
                ", not a server: it cannot host a KVServer");
  }
  impl_ = std::make_unique<Impl>(session.core(), app_id, value_size, std::move(handler),
                                 DefaultShards(session.config()));
}

KVServerCore::~KVServerCore() = default;

void KVServerCore::SetSwitchHandler(SwitchHandler handler) {
  impl_->SetSwitchHandler(std::move(handler));
}
void KVServerCore::SetMigrationHandlers(ExportHandler export_keys, ImportHandler import_keys) {
  impl_->SetMigrationHandlers(std::move(export_keys), std::move(import_keys));
}
void KVServerCore::SetInPlaceSum(InPlaceTargets targets) {
  impl_->SetInPlaceSum(std::move(targets));
}
int64_t KVServerCore::pushes_summed_in_place() const { return impl_->pushes_summed_in_place(); }
void KVServerCore::RunOnEveryShard(const std::function<void(int shard)>& fn) {
  impl_->RunOnEveryShard(fn);
}
void KVServerCore::Start() { impl_->Start(); }
int KVServerCore::num_shards() const { return impl_->num_shards(); }
int KVServerCore::rank() const { return impl_->session().rank(); }
Reducer& KVServerCore::reducer() { return impl_->session().reducer(); }
Buffer KVServerCore::Allocate(size_t bytes, uint8_t** writable) {
  return impl_->pool().Allocate(bytes, writable);
}

void KVServerCore::AddKeys(int64_t keys) { impl_->reporter().AddKeys(keys); }

void KVServerCore::Respond(const RequestMeta& meta, Buffer keys, std::vector<Buffer> values,
                           Buffer lens, const ResponseStamp& stamp) {
  int64_t bytes = 0;
  for (const Buffer& v : values) bytes += static_cast<int64_t>(v.size());
  impl_->reporter().RecordResponse(bytes);
  meta.response->AddPart(meta.part, std::move(keys), std::move(values), std::move(lens), "", stamp);
}

void KVServerCore::Redirect(const RequestMeta& meta) { meta.response->AddRedirect(meta.part); }

void KVServerCore::RespondError(const RequestMeta& meta, const std::string& error) {
  meta.response->AddPart(meta.part, {}, {}, {}, error.empty() ? "unspecified error" : error);
}

}  // namespace detail
}  // namespace pacer
