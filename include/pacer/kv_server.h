#pragma once

#include <functional>
#include <sstream>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "pacer/detail/kv_server_core.h"
#include "pacer/error.h"
#include "pacer/kv_pairs.h"
#include "pacer/session.h"
#include "pacer/span.h"

namespace pacer {

// A request as a handler sees it: views of the received keys, values and lengths. Copying a
// KVRequest keeps its memory alive.
template <typename T>
struct KVRequest {
  Span<const Key> keys;
  Span<const T> vals;
  Span<const int> lens;  // empty: every key has vals.size() / keys.size() values
  detail::RequestData data;

  size_t length(size_t i) const {
    return lens.empty() ? vals.size() / keys.size() : static_cast<size_t>(lens[i]);
  }
};

// Serves the keys this server owns. Requests are handled on session.config().server_threads
// threads; every key always lands on the same thread (RequestMeta::shard). The default handler
// sums pushed values per key and serves pulls; a custom handler answers each request with
// Response (now or later) and may throw pacer::Error to reject it. Requests that arrive before the
// KVServer exists are queued and handled once it does.
template <typename T>
class KVServer {
  static_assert(std::is_trivially_copyable<T>::value, "values are sent as bytes");

 public:
  using Handler = std::function<void(const RequestMeta&, const KVRequest<T>&, KVServer<T>*)>;

  explicit KVServer(Session& session, int app_id = 0) : KVServer(session, nullptr, app_id) {}

  KVServer(Session& session, Handler handler, int app_id = 0)
      : handler_(std::move(handler)),
        core_(session, app_id, sizeof(T),
              [this](const RequestMeta& meta, const detail::RequestData& data) {
                Handle(meta, data);
              }) {
    stores_.resize(core_.num_shards());
    core_.Start();  // only now may requests reach Handle
  }

  void Response(const RequestMeta& meta, KVPairs<T> res = {}) {
    core_.Respond(meta, Buffer::FromVector(std::move(res.keys)),
                  Buffer::FromVector(std::move(res.vals)), Buffer::FromVector(std::move(res.lens)));
  }
  void ResponseError(const RequestMeta& meta, const std::string& error) {
    core_.RespondError(meta, error);
  }
  int num_shards() const { return core_.num_shards(); }

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

  // Pushes add to the stored values (the first push of a key stores it); pulls return them.
  void SumAndServe(const RequestMeta& meta, const KVRequest<T>& req) {
    std::unordered_map<Key, std::vector<T>>& store = stores_[meta.shard];
    const size_t n = req.keys.size();
    if (meta.push) {
      for (size_t i = 0; i < n; ++i) {  // check every key before changing any
        auto it = store.find(req.keys[i]);
        if (it != store.end() && it->second.size() != req.length(i)) {
          std::ostringstream s;
          s << "key " << req.keys[i] << ": rank " << meta.sender << " pushed " << req.length(i)
            << " values, but server rank " << core_.rank() << " holds " << it->second.size();
          throw Error(s.str());
        }
      }
      const T* v = req.vals.data();
      for (size_t i = 0; i < n; ++i) {
        const size_t len = req.length(i);
        std::vector<T>& stored = store[req.keys[i]];
        if (stored.empty()) {
          stored.assign(v, v + len);
        } else {
          AddInto(stored.data(), v, len);
        }
        v += len;
      }
    }
    KVPairs<T> res;
    if (meta.pull) {
      size_t total = 0;
      for (size_t i = 0; i < n; ++i) {
        auto it = store.find(req.keys[i]);
        if (it == store.end()) {
          std::ostringstream s;
          s << "key " << req.keys[i] << " was never pushed (pull from rank " << meta.sender
            << ", server rank " << core_.rank() << ")";
          throw Error(s.str());
        }
        total += it->second.size();
      }
      res.keys.assign(req.keys.begin(), req.keys.end());
      res.vals.reserve(total);
      res.lens.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        const std::vector<T>& stored = store.find(req.keys[i])->second;
        res.vals.insert(res.vals.end(), stored.begin(), stored.end());
        res.lens.push_back(static_cast<int>(stored.size()));
      }
    }
    Response(meta, std::move(res));
  }

  static void AddInto(T* __restrict dst, const T* __restrict src, size_t n) {
    for (size_t j = 0; j < n; ++j) dst[j] += src[j];
  }

  Handler handler_;
  std::vector<std::unordered_map<Key, std::vector<T>>> stores_;  // one per shard
  detail::KVServerCore core_;
};

}  // namespace pacer
