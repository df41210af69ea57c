#pragma once

#include <algorithm>
#include <functional>
#include <sstream>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "pacer/detail/sharded_server.h"
#include "pacer/error.h"
#include "pacer/kv_pairs.h"
#include "pacer/reducer.h"
#include "pacer/span.h"

namespace pacer {

class Session;  // include "pacer/session.h" to make one

/// A request as a handler sees it: views of the received keys, values and lengths. Copying a
/// KVRequest keeps its memory alive, except where the values are lent (data.values.lent(): pushed
/// from Session::AllocatePushMemory on this host and read in place): the worker may write them
/// again once the request is answered, so a handler that keeps them past its Response keeps
/// data.values.Owned().
template <typename T>
struct KVRequest {
  Span<const Key> keys;  ///< sorted and unique
  Span<const T> vals;    ///< the keys' values, one key's after another's; empty for a pull
  Span<const int> lens;  ///< empty: every key has vals.size() / keys.size() values
  /// The buffers under keys, vals and lens (`keys`, `values`, `lens`), to keep them alive or to
  /// send them on without a copy.
  detail::RequestData data;

  /// The number of values of keys[i].
  size_t length(size_t i) const {
    return lens.empty() ? vals.size() / keys.size() : static_cast<size_t>(lens[i]);
  }
};

/// Serves the keys this server owns. Requests are handled by session.config().server_threads
/// shards, each running one request at a time; every key always lands on the same shard
/// (RequestMeta::shard), so per-shard state needs no lock. The default handler
/// sums pushed values per key and serves pulls; a custom handler answers each request with
/// Response (now or later) and may throw pacer::Error to reject it. Requests that arrive before
/// the KVServer exists are queued and handled once it does.
template <typename T>
class KVServer {
  static_assert(std::is_trivially_copyable<T>::value, "values are sent as bytes");

 public:
  /// Handles one request, or the part of it on one shard (RequestMeta::shard, RequestMeta::part):
  /// answers it with Response or ResponseError exactly once, now or later (copy the RequestMeta),
  /// or throws pacer::Error to reject it.
  using Handler = std::function<void(const RequestMeta&, const KVRequest<T>&, KVServer<T>*)>;

  /// On a server: the default handler for the KVWorker requests of `app_id`. A pull of a key
  /// never pushed, or a push of another length than the key's stored values, is rejected with an
  /// Error naming the key and ranks.
  explicit KVServer(Session& session, int app_id = 0) : KVServer(session, nullptr, app_id) {}

  /// On a server: `handler` answers the KVWorker requests of `app_id`.
  KVServer(Session& session, Handler handler, int app_id = 0)
      : handler_(std::move(handler)),
        sharded_(session, app_id, sizeof(T),
                 [this](const RequestMeta& meta, const detail::RequestData& data) {
                   Handle(meta, data);
                 }) {
    stores_.resize(sharded_.num_shards());
    if constexpr (std::is_same_v<T, float>) {
      if (!handler_) {
        sharded_.SetInPlaceSum([this](int shard, const Key* keys, size_t n,
                                      const std::vector<size_t>& lengths,
                                      std::vector<float*>* targets) {
          return StoredTargets(shard, keys, n, lengths, targets);
        });
      }
    }
    sharded_.Start();  // only now may requests reach Handle
  }

  /// Answers the request of `meta`: a push with nothing, a pull with its keys' values (`res`).
  /// Once per handler call; a second answer is logged and ignored.
  void Response(const RequestMeta& meta, KVPairs<T> res = {}) {
    std::vector<Buffer> vals;
    if (!res.vals.empty()) vals.push_back(Buffer::FromVector(std::move(res.vals)));
    sharded_.Respond(meta, Buffer::FromVector(std::move(res.keys)), std::move(vals),
                     Buffer::FromVector(std::move(res.lens)));
  }
  /// Rejects the request of `meta`: the worker's Wait throws Error carrying `error`.
  void ResponseError(const RequestMeta& meta, const std::string& error) {
    sharded_.RespondError(meta, error);
  }
  /// The number of shards (threads) requests are spread over; RequestMeta::shard is below it.
  int num_shards() const { return sharded_.num_shards(); }
  /// How many pushes were summed into the store as their values arrived, piece by piece (float
  /// values, this default handler, a worker streaming over TCP; see
  /// TransportTuning::stream_piece_bytes).
  int64_t pushes_summed_in_place() const { return sharded_.pushes_summed_in_place(); }

 private:
  void Handle(const RequestMeta& meta, const detail::RequestData& data) {
    KVRequest<T> req{{data.keys.as<Key>(), data.keys.count<Key>()},
                     {data.values.as<T>(), data.values.count<T>()},
                     {data.lens.as<int>(), data.lens.count<int>()},
                     data};
    if (handler_) {
      handler_(meta, req, this);
    } else {
      SumAndServe(meta, req);
    }
  }

  // A stored value: a recycled buffer shared with the responses that send it.
  struct Values {
    Buffer buffer;
    T* data = nullptr;
    size_t size = 0;
    bool shared() const { return buffer.owner().use_count() > 1; }
  };

  Values NewValues(size_t size) {
    uint8_t* out = nullptr;
    Values v;
    v.buffer = sharded_.Allocate(size * sizeof(T), &out);
    v.data = reinterpret_cast<T*>(out);
    v.size = size;
    return v;
  }

  // The stored values of `keys` where a push can be summed into them as it arrives: each key
  // stored with `lengths[i]` values and held by no response in flight.
  bool StoredTargets(int shard, const Key* keys, size_t n, const std::vector<size_t>& lengths,
                     std::vector<T*>* targets) {
    std::unordered_map<Key, Values>& store = stores_[shard];
    for (size_t i = 0; i < n; ++i) {
      auto it = store.find(keys[i]);
      if (it == store.end() || it->second.size != lengths[i] || it->second.shared()) return false;
      targets->push_back(it->second.data);
    }
    return true;
  }
  // Pushes add to the stored values (the first push of a key stores it); pulls send them without
  // a copy. A value still referenced by a response in flight is never changed: a push then sums
  // into a fresh vector (copy-on-write), which costs no more than summing in place.
  void SumAndServe(const RequestMeta& meta, const KVRequest<T>& req) {
    std::unordered_map<Key, Values>& store = stores_[meta.shard];
    const size_t n = req.keys.size();
    if (meta.push) {
      for (size_t i = 0; i < n; ++i) {  // check every key before changing any
        auto it = store.find(req.keys[i]);
        if (it != store.end() && it->second.size != req.length(i)) {
          std::ostringstream s;
          s << "key " << req.keys[i] << ": rank " << meta.sender << " pushed " << req.length(i)
            << " values, but server rank " << sharded_.rank() << " holds " << it->second.size;
          throw Error(s.str());
        }
      }
      const T* v = req.vals.data();
      for (size_t i = 0; i < n; ++i) {
        const size_t len = req.length(i);
        auto [it, inserted] = store.try_emplace(req.keys[i]);
        Values& stored = it->second;
        if (inserted) {
          sharded_.AddKeys(1);
          stored = NewValues(len);
          std::copy_n(v, len, stored.data);
        } else if (!stored.shared()) {
          Add(stored.data, stored.data, v, len);
        } else {
          Values fresh = NewValues(len);
          Add(fresh.data, stored.data, v, len);
          stored = std::move(fresh);
        }
        v += len;
      }
    }
    if (!meta.pull) {
      sharded_.Respond(meta, Buffer(), {}, Buffer());
      return;
    }
    std::vector<Buffer> vals;
    std::vector<int> lens;
    for (size_t i = 0; i < n; ++i) {
      auto it = store.find(req.keys[i]);
      if (it == store.end()) {
        std::ostringstream s;
        s << "key " << req.keys[i] << " was never pushed (pull from rank " << meta.sender
          << ", server rank " << sharded_.rank() << ")";
        throw Error(s.str());
      }
      vals.push_back(it->second.buffer);
      lens.push_back(static_cast<int>(it->second.size));
    }
    sharded_.Respond(meta, req.data.keys, std::move(vals), Buffer::FromVector(std::move(lens)));
  }

  // dst = a + b; dst may be a (in place), never b. Floats go by AddFloats; other types a plain
  // loop.
  void Add(T* dst, const T* a, const T* b, size_t n) {
    if constexpr (std::is_same_v<T, float>) {
      AddFloats(sharded_.reducer(), dst, a, b, n);
    } else {
      for (size_t j = 0; j < n; ++j) dst[j] = a[j] + b[j];
    }
  }

  Handler handler_;
  std::vector<std::unordered_map<Key, Values>> stores_;  // one per shard
  detail::ShardedServer sharded_;
};

}  // namespace pacer
