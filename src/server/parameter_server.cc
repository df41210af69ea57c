#include "pacer/parameter_server.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/messages/message.h"
#include "ps/node/node.h"
#include "server/gradient_cache.h"
#include "server/request_shards.h"
#include "server/sent_parameters.h"
#include "server/sync_engine.h"

namespace pacer {

// A server's parameters: one synchronization engine per request shard, each used only by its
// shard, applying the job's rule and optimizer to the gradients of the keys on the shard.
class ParameterShards {
 public:
  ParameterShards(Node& node, int app_id)
      : node_(node),
        requests_(node, app_id, sizeof(float),
                  [this](const RequestMeta& meta, const detail::RequestData& data) {
                    Handle(meta, data);
                  }) {
    SyncEngine::Options options;
    options.num_workers = node.roles().num_workers();
    options.mode = SyncMode::Starting(node.config().sync);
    options.optimizer = OptimizerSpec::Parse(node.config().optimizer);
    auto allocate = [this](size_t bytes, uint8_t** out) { return requests_.Allocate(bytes, out); };
    for (int i = 0; i < requests_.num_shards(); ++i) {
      engines_.push_back(std::make_unique<SyncEngine>(options, node.reducer(), allocate));
    }
    caches_.resize(requests_.num_shards());
    sent_.resize(requests_.num_shards());
    requests_.SetSwitchHandler(
        [this](const RequestMeta& meta, const detail::SyncSwitchRequest& request) {
          Switch(meta, request);
        });
    requests_.SetMigrationHandlers(
        [this](int shard, const std::function<bool(Key)>& moving) {
          std::vector<detail::RequestShards::MovedKey> records = engines_[shard]->Export(moving);
          for (auto& [key, state] : records) {
            state = caches_[shard].Pack(key, state);
            sent_[shard].ForgetKey(key);
          }
          requests_.AddKeys(-static_cast<int64_t>(records.size()));
          return records;
        },
        [this](int shard, const std::vector<detail::RequestShards::MovedKey>& records) {
          for (const auto& [key, record] : records) {
            engines_[shard]->Import(key, caches_[shard].Unpack(key, record));
          }
          requests_.AddKeys(static_cast<int64_t>(records.size()));
        });
    requests_.Start();
    // STRET probes a relayed straggler's own links to the servers (src/worker/link_probe.h).
    if (app_id == 0) {
      node.dispatcher().Take(proto::PROBE_ECHO, [&node](Message&& msg) {
        const int sender = msg.meta.sender();
        node.cluster().SendOrLog(sender, EchoOf(std::move(msg), node.rank()));
      });
      answers_probes_ = true;
    }
    // A worker the job goes on without: no clock waits for its gradients any more.
    exclusions_ = node.cluster().WatchExclusions([this](int rank, const std::string&) {
      const int worker = node_.roles().IndexOf(rank);
      for (int shard = 0; shard < requests_.num_shards(); ++shard) {
        requests_.RunOnShard(shard, [this, worker](int s) { engines_[s]->Exclude(worker); });
      }
    });
  }

  ~ParameterShards() {
    if (answers_probes_) node_.dispatcher().Take(proto::PROBE_ECHO, nullptr);
  }
  ParameterShards(const ParameterShards&) = delete;
  ParameterShards& operator=(const ParameterShards&) = delete;

  std::map<Key, ParameterServer::KeyStats> Keys() {
    std::mutex mu;
    std::map<Key, ParameterServer::KeyStats> all;
    requests_.RunOnEveryShard([&](int shard) {
      const SyncEngine& engine = *engines_[shard];
      for (Key key : engine.Keys()) {
        const KeyStatus s = engine.Status(key);
        std::lock_guard<std::mutex> lock(mu);
        all[key] = {s.version, s.applied, s.dropped, s.pushes,
                    caches_[shard].BytesOf(key) + sent_[shard].BytesOf(key)};
      }
    });
    return all;
  }

 private:
  int WorkerIndex(int rank) const {
    if (rank < 0 || rank >= node_.roles().size() || node_.roles().RoleOf(rank) != Role::kWorker) {
      throw Error(StrCat("rank ", rank, " is not a worker: only workers push and pull"));
    }
    return node_.roles().IndexOf(rank);
  }

  void Handle(const RequestMeta& meta, const detail::RequestData& data) {
    SyncEngine& engine = *engines_[meta.shard];
    const int worker = WorkerIndex(meta.sender);
    const Key* keys = data.keys.as<Key>();
    const size_t n = data.keys.count<Key>();
    const int* lens = data.lens.as<int>();
    if (meta.push) {
      std::vector<int> relayed;
      for (int rank : meta.relayed) relayed.push_back(WorkerIndex(rank));
      const size_t uniform = n == 0 ? 0 : data.values.size() / n;
      std::vector<Gradient> gradients(n);
      size_t offset = 0;
      for (size_t i = 0; i < n; ++i) {
        const size_t bytes = lens ? static_cast<size_t>(lens[i]) * sizeof(float) : uniform;
        gradients[i] = {
            worker, meta.clock, meta.version, meta.weight, data.values.Slice(offset, bytes),
            relayed};
        offset += bytes;
      }
      if (meta.same_as_last || meta.cache_gradient) Recall(meta, worker, keys, gradients);
      if (meta.init && !relayed.empty()) {
        throw Error(StrCat("key ", keys[0], ": initial values relayed for ", relayed.size(),
                           " workers; initial values are worker 0's alone"));
      }
      if (meta.init) {
        if (worker != 0) {
          throw Error(StrCat("key ", keys[0], ": initial values from worker ", worker, " (rank ",
                             meta.sender, "); only worker 0 initializes"));
        }
        for (size_t i = 0; i < n; ++i) {
          if (meta.state) {
            engine.Resume(keys[i], gradients[i].values);
          } else {
            engine.Init(keys[i], worker, gradients[i].values.as<float>(),
                        gradients[i].values.size() / sizeof(float));
          }
        }
        requests_.AddKeys(static_cast<int64_t>(n));
      } else {
        for (size_t i = 0; i < n; ++i) engine.Check(keys[i], gradients[i]);
        GradientCache& cache = caches_[meta.shard];
        for (size_t i = 0; i < n && !meta.same_as_last; ++i) {
          if (meta.cache_gradient) {
            cache.Keep(worker, keys[i], gradients[i].values);
          } else {
            cache.Forget(worker, keys[i]);
          }
        }
        for (size_t i = 0; i < n; ++i) engine.Push(keys[i], gradients[i]);
      }
    }
    if (!meta.pull) {
      requests_.Respond(meta, Buffer(), {}, Buffer());
      return;
    }
    // A push-pull pulls for the iteration after the one it pushed.
    const int64_t clock = meta.push && !meta.init ? meta.clock + 1 : meta.clock;
    engine.Pull(
        std::vector<Key>(keys, keys + n), clock,
        [this, meta, data, &engine] { Serve(meta, data.keys, engine); }, worker,
        meta.after_own_push, [this, meta] { requests_.Redirect(meta); });
  }

  // SMS's skip: a push "same as last" takes the values kept for its worker; checked before any
  // key is applied, so that a bad one changes nothing.
  void Recall(const RequestMeta& meta, int worker, const Key* keys,
              std::vector<Gradient>& gradients) const {
    const char* what = meta.same_as_last ? "'same as last'" : "a gradient to keep";
    if (meta.init || meta.state || !meta.relayed.empty()) {
      throw Error(StrCat("key ", keys[0], ": worker ", worker, " (rank ", meta.sender, ") sent ",
                         what, " with ", meta.init ? "initial values" : "relayed gradients",
                         "; only a worker's own gradients are kept"));
    }
    if (!meta.same_as_last) return;
    if (meta.cache_gradient) {
      throw Error(StrCat("key ", keys[0], ": worker ", worker, " (rank ", meta.sender,
                         ") sent 'same as last' and a gradient to keep in one push"));
    }
    for (size_t i = 0; i < gradients.size(); ++i) {
      if (gradients[i].values.size() != 0) {
        throw Error(StrCat("key ", keys[i], ": worker ", worker, " (rank ", meta.sender,
                           ") sent 'same as last' with ",
                           gradients[i].values.size() / sizeof(float), " values; it carries none"));
      }
      gradients[i].values = caches_[meta.shard].Recall(worker, meta.sender, keys[i]);
    }
  }

  void Serve(const RequestMeta& meta, const Buffer& keys_buffer, const SyncEngine& engine) {
    const Key* keys = keys_buffer.as<Key>();
    const size_t n = keys_buffer.count<Key>();
    std::vector<Buffer> vals;
    std::vector<int> lens;
    ResponseStamp stamp;
    SentParameters& sent = sent_[meta.shard];
    const int worker = WorkerIndex(meta.sender);
    for (size_t i = 0; i < n; ++i) {
      const KeyStatus status = engine.Status(keys[i]);
      Buffer values;
      if (!meta.state) {
        values = *engine.Values(keys[i]);
        if (!meta.keep_parameters) {
          sent.Forget(worker, keys[i]);
        } else if (sent.Unchanged(worker, keys[i], meta.version, values, status.version,
                                  node_.config().skip_pull_eps)) {
          // No values: the worker keeps what it holds, of the version it pulled with.
          lens.push_back(0);
          stamp.Merge({meta.version, status.complete, -1, 1});
          continue;
        }
      } else {
        // Served from whichever request made the keys ready: an error goes to this one's sender.
        try {
          values = engine.Checkpoint(keys[i]);  // whole 8- and 4-byte fields: a length in floats
        } catch (const Error& e) {
          requests_.RespondError(meta, e.what());
          return;
        }
      }
      vals.push_back(values);
      lens.push_back(static_cast<int>(values.size() / sizeof(float)));
      stamp.Merge({status.version, status.complete, -1});
    }
    requests_.Respond(meta, keys_buffer, std::move(vals), Buffer::FromVector(std::move(lens)),
                      stamp);
  }

  void Switch(const RequestMeta& meta, const detail::SyncSwitchRequest& request) {
    SyncEngine& engine = *engines_[meta.shard];
    ResponseStamp stamp;
    if (request.commit) {
      engine.CommitSwitch(SyncMode::Parse(request.mode), request.first_clock);
    } else {
      stamp.clock = engine.PrepareSwitch();
    }
    requests_.Respond(meta, Buffer(), {}, Buffer(), stamp);
  }

  Node& node_;
  bool answers_probes_ = false;
  std::vector<std::unique_ptr<SyncEngine>> engines_;  // one per shard, used only by its shard
  std::vector<GradientCache> caches_;                 // one per shard, used only by its shard
  std::vector<SentParameters> sent_;                  // one per shard, used only by its shard
  detail::RequestShards requests_;                    // stops its threads before the engines go
  std::shared_ptr<void> exclusions_;                  // last: dropped first
};

ParameterServer::ParameterServer(Node& node, int app_id)
    : shards_(std::make_unique<ParameterShards>(node, app_id)) {}

ParameterServer::~ParameterServer() = default;

std::map<Key, ParameterServer::KeyStats> ParameterServer::Keys() { return shards_->Keys(); }

}  // namespace pacer
