#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "pacer/detail/routed_client.h"
#include "pacer/error.h"
#include "pacer/kv_pairs.h"
#include "pacer/span.h"

namespace pacer {

class Session;  // include "pacer/session.h" to make one

/// Pushes values to and pulls values from the servers, by key. Every call is asynchronous and
/// returns a timestamp for Wait. Keys must be sorted and unique; `lens` gives the number of values
/// per key, or is empty when every key has the same number. Values of a key are summed by the
/// default server. Errors (bad input, a server's rejection) throw pacer::Error naming the key, rank
/// and sizes: bad input at the call, a server's rejection at Wait. A callback runs on the
/// communication thread when the request succeeded, before Wait returns; it must not block.
/// `cmd` is passed to the server's handler as RequestMeta::user_command.
template <typename T>
class KVWorker {
  static_assert(std::is_trivially_copyable<T>::value, "values are sent as bytes");

 public:
  /// Runs once a request has succeeded (see the class comment).
  using Callback = std::function<void()>;

  /// On a worker: requests to the servers' KVServer of the same `app_id`.
  explicit KVWorker(Session& session, int app_id = 0) : client_(session, app_id, sizeof(T)) {}

  /// Copies keys and values: the caller may reuse its vectors at once.
  int Push(const std::vector<Key>& keys, const std::vector<T>& vals,
           const std::vector<int>& lens = {}, int cmd = 0, Callback cb = nullptr) {
    return client_.Submit(
        {detail::Operation::kPush, Copy(keys), Copy(vals), Copy(lens), {}, std::move(cb), cmd, {}});
  }

  /// Zero-copy: keys, vals and lens must stay valid and unchanged until Wait returns.
  int ZPush(Span<const Key> keys, Span<const T> vals, Span<const int> lens = {}, int cmd = 0,
            Callback cb = nullptr) {
    return client_.Submit(
        {detail::Operation::kPush, View(keys), View(vals), View(lens), {}, std::move(cb), cmd, {}});
  }

  /// Pushes the element-wise sum of several local buffers of the same keys (the gradients of
  /// several GPUs or micro-batches of this worker), summed in one pass by the session's Reducer:
  /// the caller may reuse its buffers at once. Floats only; at most Reducer::kMaxInputs buffers.
  int PushSum(const std::vector<Key>& keys, const std::vector<Span<const T>>& local_vals,
              const std::vector<int>& lens = {}, int cmd = 0, Callback cb = nullptr) {
    static_assert(std::is_same_v<T, float>, "PushSum sums float values");
    return client_.Submit({detail::Operation::kPush,
                           Copy(keys),
                           client_.SumOf(local_vals),
                           Copy(lens),
                           {},
                           std::move(cb),
                           cmd,
                           {}});
  }

  /// Pulls into `*vals` (resized to fit) and, if given, the per-key counts into `*lens`. Both
  /// must stay valid until Wait returns.
  int Pull(const std::vector<Key>& keys, std::vector<T>* vals, std::vector<int>* lens = nullptr,
           int cmd = 0, Callback cb = nullptr) {
    return client_.Submit(
        {detail::Operation::kPull, Copy(keys), {}, {}, Into(vals, lens), std::move(cb), cmd, {}});
  }

  /// Zero-copy pull into the caller's buffer, which must hold exactly the pulled values; keys and
  /// vals must stay valid until Wait returns. If lens is non-empty it receives the per-key counts.
  int ZPull(Span<const Key> keys, Span<T> vals, Span<int> lens = {}, int cmd = 0,
            Callback cb = nullptr) {
    return client_.Submit(
        {detail::Operation::kPull, View(keys), {}, {}, Into(vals, lens), std::move(cb), cmd, {}});
  }

  /// Pushes vals, then pulls the updated values of the same keys into `*outs`, in one round trip.
  /// Copies keys and values as Push does; `outs` must stay valid until Wait returns.
  int PushPull(const std::vector<Key>& keys, const std::vector<T>& vals, std::vector<T>* outs,
               const std::vector<int>& lens = {}, int cmd = 0, Callback cb = nullptr) {
    return client_.Submit({detail::Operation::kPushPull,
                           Copy(keys),
                           Copy(vals),
                           Copy(lens),
                           Into(outs, nullptr),
                           std::move(cb),
                           cmd,
                           {}});
  }

  /// Zero-copy PushPull: every span must stay valid until Wait returns.
  int ZPushPull(Span<const Key> keys, Span<const T> vals, Span<T> outs, Span<const int> lens = {},
                int cmd = 0, Callback cb = nullptr) {
    return client_.Submit({detail::Operation::kPushPull,
                           View(keys),
                           View(vals),
                           View(lens),
                           Into(outs, Span<int>()),
                           std::move(cb),
                           cmd,
                           {}});
  }

  /// Blocks until the request finished; throws Error if it failed, TimeoutError after the
  /// session's timeout_s. A request that timed out is abandoned: its callback never runs, but a
  /// pull's values already on their way may still land in its destination, so keep that memory
  /// until the session ends (or reuse it) rather than freeing it.
  void Wait(int timestamp) { client_.Wait(timestamp); }
  /// Returns false if the request is still running after `timeout`; throws Error if it failed.
  bool Wait(int timestamp, std::chrono::milliseconds timeout) {
    return client_.Wait(timestamp, timeout);
  }

 private:
  template <typename U>
  Buffer Copy(const std::vector<U>& v) {
    return client_.Copy(v.data(), v.size() * sizeof(U));
  }
  template <typename U>
  static Buffer View(Span<U> s) {
    return Buffer(s.data(), s.size() * sizeof(U));
  }
  static detail::PullDestination Into(std::vector<T>* vals, std::vector<int>* lens) {
    if (vals == nullptr) throw Error("pull into a null vector");
    detail::PullDestination d;
    d.values = [vals](size_t bytes) {
      vals->resize(bytes / sizeof(T));
      return reinterpret_cast<uint8_t*>(vals->data());
    };
    if (lens != nullptr) {
      d.lengths = [lens](size_t count) {
        lens->resize(count);
        return reinterpret_cast<int32_t*>(lens->data());
      };
    }
    return d;
  }
  static detail::PullDestination Into(Span<T> vals, Span<int> lens) {
    detail::PullDestination d;
    d.values = [vals](size_t bytes) {
      return bytes == vals.size() * sizeof(T) ? reinterpret_cast<uint8_t*>(vals.data()) : nullptr;
    };
    if (!lens.empty()) {
      d.lengths = [lens](size_t count) {
        return count == lens.size() ? reinterpret_cast<int32_t*>(lens.data()) : nullptr;
      };
    }
    return d;
  }

  detail::RoutedClient client_;
};

}  // namespace pacer
