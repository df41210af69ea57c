#include "server/request_shards.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/messages/request_validation.h"
#include "server/in_place_sum.h"
#include "server/pending_response.h"
#include "server/range_migration.h"
#include "server/shard_parts.h"

namespace pacer {
namespace detail {
namespace {

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Node& CheckedServer(Node& node) {
  if (node.role() != Role::kServer) {
    throw Error(StrCat("rank ", node.rank(), " is a ", RoleName(node.role()),
                       ", not a server: it cannot host a KVServer"));
  }
  return node;
}

int DefaultShards(const Config& config) {
  if (config.server_threads > 0) return config.server_threads;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::min(4, cores));
}

}  // namespace

RequestShards::RequestShards(Node& node, int app_id, size_t value_size, Handler handler)
    : node_(CheckedServer(node)),
      app_id_(app_id),
      value_size_(value_size),
      handler_(std::move(handler)),
      injected_(node),
      queues_(DefaultShards(node.config()), !injected_.emulates_rate(),
              [this](const ShardTask& task) { Serve(task); }),
      seconds_per_byte_(queues_.size(), 0.0),
      reporter_(node, [this] { return queues_.Queued(); }),
      service_clock_(node.cluster().ranks_fit_cores() && node.settings().faults.empty()
                         ? &WallSeconds
                         : &ThreadCpuSeconds) {}

RequestShards::~RequestShards() {
  if (started_) node_.dispatcher().DetachServer(app_id_);
  queues_.Stop();  // before the handlers and the reporter the tasks use go
}

void RequestShards::Start() {
  queues_.Start();
  started_ = true;
  Dispatcher::Consumers consumers;
  if (in_place_targets_) {
    consumers = [this](const Message& msg) { return InPlaceSumFor(msg); };
  }
  node_.dispatcher().AttachServer(
      app_id_, [this](Message&& msg) { OnRequest(std::move(msg)); }, std::move(consumers));
}

void RequestShards::SetMigrationHandlers(ExportHandler export_keys, ImportHandler import_keys) {
  RangeMigration::Shards shards{num_shards(), [this](Key key) { return ShardOf(key); },
                                [this](int shard, std::function<void(int)> fn) {
                                  queues_.RunOnShard(shard, std::move(fn), /*ahead=*/true);
                                },
                                [this](int shard, const std::function<bool(Key)>& moving) {
                                  queues_.ServeQueued(shard, moving);
                                }};
  migration_ = std::make_unique<RangeMigration>(node_, app_id_, std::move(shards),
                                                std::move(export_keys), std::move(import_keys));
}

int RequestShards::ShardOf(Key key) const { return ShardOfKey(key, num_shards()); }

std::string RequestShards::Validate(const Message& msg, bool push, size_t vals_bytes) const {
  if (msg.meta.value_size() != static_cast<int>(value_size_) && (push || msg.meta.value_size())) {
    return StrCat("values of ", msg.meta.value_size(), " bytes, but the KVServer of app ", app_id_,
                  " holds values of ", value_size_, " bytes");
  }
  if (!push && vals_bytes > 0) return StrCat("a pull carries ", vals_bytes, " bytes of values");
  return ValidateKeyValues(msg.keys.as<Key>(), msg.num_keys(), msg.lens.as<int32_t>(),
                           msg.lens.count<int32_t>(), push ? vals_bytes / value_size_ : 0, push);
}

void RequestShards::OnSwitch(const Message& msg) {
  if (!switch_handler_) {
    node_.cluster().Reject(msg.meta, StrCat("the server of app ", app_id_,
                                            " has no synchronization engine to switch"));
    return;
  }
  if (msg.meta.sender() != 0) {
    node_.cluster().Reject(msg.meta, "only the scheduler (rank 0) switches modes");
    return;
  }
  RequestMeta meta;
  meta.sender = msg.meta.sender();
  meta.app_id = app_id_;
  meta.timestamp = msg.meta.request_id();
  meta.response = std::make_shared<PendingResponse>(msg.meta, node_, value_size_, num_shards());
  SyncSwitchRequest request{msg.meta.command() == proto::SYNC_COMMIT, msg.meta.sync_mode(),
                            msg.meta.clock()};
  for (int shard = 0; shard < num_shards(); ++shard) {
    meta.shard = meta.part = shard;
    queues_.Dispatch({meta, {}, request, nullptr});
  }
}

void RequestShards::Serve(const ShardTask& task) {
  double& seconds_per_byte = seconds_per_byte_[task.meta.shard];
  // A request's work in bytes, counting its fixed cost (a few microseconds, whatever it
  // carries) as kRequestWorkBytes: else small requests would look slow per byte.
  const size_t bytes =
      std::max(ServiceReporter::kRequestWorkBytes, task.data.keys.size() + task.data.values.size());
  const double start = service_clock_();
  const InjectedService::Delay delay = injected_.Apply(bytes, seconds_per_byte);
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
  seconds_per_byte =
      seconds_per_byte > 0 ? seconds_per_byte + 0.1 * (per_byte - seconds_per_byte) : per_byte;
}

RequestShards::Ownership RequestShards::Owns(const Key* keys, size_t n, int64_t epoch) const {
  const std::shared_ptr<const Router> table = node_.routing().current();
  const int me = node_.roles().IndexOf(node_.rank());
  for (size_t i = 0; i < n; ++i) {
    if (table->ServerOf(keys[i]) != me) {
      return epoch > table->epoch() ? Ownership::kHold : Ownership::kRedirect;
    }
  }
  return Ownership::kOwned;
}

void RequestShards::ReleaseHeld() {
  std::vector<Message> held;
  held.swap(held_);
  for (Message& msg : held) OnRequest(std::move(msg));
}

void RequestShards::OnRequest(Message&& msg) {
  const proto::Command command = msg.meta.command();
  if (command == proto::SYNC_PREPARE || command == proto::SYNC_COMMIT) {
    OnSwitch(msg);
    return;
  }
  if (command == proto::MIGRATE || command == proto::MIGRATE_STATE ||
      command == proto::ROUTING_UPDATE) {
    if (command != proto::ROUTING_UPDATE) {
      if (!migration_) {
        node_.cluster().Reject(
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
    node_.cluster().Reject(msg.meta, "not a key-value request");
    return;
  }
  const bool push = command != proto::PULL;
  if (msg.consumer) {
    AnswerSummedPush(msg);
    return;
  }
  std::string error = Validate(msg, push, msg.vals_bytes());
  if (!error.empty()) {
    node_.cluster().Reject(msg.meta, error);
    return;
  }
  // A request ahead of this server's table waits for the table; one ahead by more than any run
  // of migrations could be would wait forever.
  const int64_t epoch = node_.routing().current()->epoch();
  if (msg.meta.epoch() > epoch + kMaxEpochsAhead) {
    node_.cluster().Reject(msg.meta, StrCat("request under routing epoch ", msg.meta.epoch(),
                                            ", but server rank ", node_.rank(), " is at epoch ",
                                            epoch, " (more than ", kMaxEpochsAhead, " behind)"));
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
      node_.routing().Redirect(msg.meta, false);
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
    queues_.Dispatch({meta, std::move(parts[p].data), std::nullopt, nullptr});
  }
}

void RequestShards::CountPushLoad(const Message& msg, size_t values_bytes) {
  if (!reporter_.range_load()) return;
  reporter_.range_load()->AddPush(*node_.routing().current(), msg.keys.as<Key>(), msg.num_keys(),
                                  msg.lens.as<int32_t>(), value_size_, values_bytes);
}

RequestMeta RequestShards::MetaOf(const Message& msg, int parts) {
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
  meta.relayed.assign(msg.meta.relayed().begin(), msg.meta.relayed().end());
  meta.cache_gradient = msg.meta.cache_gradient();
  meta.same_as_last = msg.meta.same_as_last();
  meta.keep_parameters = msg.meta.keep_parameters();
  meta.response = std::make_shared<PendingResponse>(msg.meta, node_, value_size_, parts);
  return meta;
}

std::shared_ptr<PayloadConsumer> RequestShards::InPlaceSumFor(const Message& msg) {
  const Key* keys = msg.keys.as<Key>();
  const size_t n = msg.num_keys();
  // A push the server keeps, or one that stands for what it kept, goes through the handler.
  if (msg.meta.command() != proto::PUSH || n == 0 || injected_.any_fault() ||
      msg.meta.cache_gradient() || msg.meta.same_as_last() ||
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
  if (!queues_.TryHold(shard)) return nullptr;
  std::vector<float*> targets;
  if (!in_place_targets_(shard, keys, n, lengths, &targets)) {
    queues_.Release(shard);
    return nullptr;
  }
  return std::make_shared<InPlaceSum>(node_.reducer(), std::move(targets), std::move(offsets),
                                      [this, shard] { queues_.Release(shard); });
}

void RequestShards::AnswerSummedPush(const Message& msg) {
  auto* sum = dynamic_cast<const InPlaceSum*>(msg.consumer.get());
  if (sum == nullptr) {
    node_.cluster().Reject(msg.meta, "its values went to a consumer of another server");
    return;
  }
  CountPushLoad(msg, msg.consumed_bytes);
  reporter_.RecordRequest(sum->seconds(), static_cast<int64_t>(msg.consumed_bytes));
  reporter_.RecordResponse(0);
  MetaOf(msg, 1).response->AddPart(0, {}, {}, {}, "");
  summed_in_place_.fetch_add(1);
}

void RequestShards::Respond(const RequestMeta& meta, Buffer keys, std::vector<Buffer> values,
                            Buffer lens, const ResponseStamp& stamp) {
  int64_t bytes = 0;
  for (const Buffer& v : values) bytes += static_cast<int64_t>(v.size());
  reporter_.RecordResponse(bytes);
  meta.response->AddPart(meta.part, std::move(keys), std::move(values), std::move(lens), "", stamp);
}

void RequestShards::RespondError(const RequestMeta& meta, const std::string& error) {
  meta.response->AddPart(meta.part, {}, {}, {}, error.empty() ? "unspecified error" : error);
}

void RequestShards::Redirect(const RequestMeta& meta) { meta.response->AddRedirect(meta.part); }

}  // namespace detail
}  // namespace pacer
