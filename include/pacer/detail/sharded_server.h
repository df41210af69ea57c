#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pacer/buffer.h"
#include "pacer/detail/response_stamp.h"
#include "pacer/reducer.h"
#include "pacer/types.h"

namespace pacer {

class Node;     // a rank inside a Session (src/ps/node/node.h)
class Session;  // include "pacer/session.h" to make one

namespace detail {
class PendingResponse;
class RequestShards;  // what a ShardedServer runs on (src/server/request_shards.h)
}  // namespace detail

/// What a server's handler knows about a request, besides its keys and values.
struct RequestMeta {
  int sender = -1;        ///< rank of the worker
  int app_id = 0;         ///< the app the request is for (the KVWorker's and KVServer's app_id)
  int64_t timestamp = 0;  ///< the worker's timestamp
  bool push = false;      ///< the request carries values to store
  bool pull = false;      ///< the request asks for values (both: a PushPull)
  int user_command = 0;   ///< the worker's `cmd`, for the handler to interpret
  /// The shard handling this request (0..num_shards-1). A key always belongs to the same shard,
  /// and a shard runs one request at a time in arrival order (on its own thread, or on the
  /// receiving thread when the request is small and the shard idle), so per-shard state needs no
  /// lock.
  int shard = 0;
  /// Which part of the request this is, when its keys were split over shards (for the response).
  int part = 0;
  // GradientSync's stamps (see ParameterServer); a KVWorker's request leaves the defaults:
  int64_t clock = 0;            ///< the push's iteration, or the one a pull is for
  int64_t version = 0;          ///< the parameter version a gradient was computed on
  double weight = 1;            ///< the gradient's weight (GradientSync::set_weight)
  bool init = false;            ///< the push carries a key's initial values
  bool after_own_push = false;  ///< a pull: not before this worker's push of clock - 1 arrived
  bool state = false;           ///< checkpoints: keys' whole state instead of their values
  /// A push that carries other workers' gradients too (STRET's relay): their ranks.
  std::vector<int> relayed;
  /// SMS's skip: keep this push's values for the sender's next one.
  bool cache_gradient = false;
  /// SMS's skip: this push carries no values and stands for the values kept.
  bool same_as_last = false;
  /// SMS's skip, a pull: the worker holds the parameters last sent to it, of `version`.
  bool keep_parameters = false;
  /// Collects the response; copy the meta to respond later (for instance when a synchronization
  /// rule fires).
  std::shared_ptr<detail::PendingResponse> response;
};

namespace detail {

struct RequestData {
  Buffer keys;
  Buffer values;
  Buffer lens;
};

// The bytes under KVServer<T>: validates requests, splits each by shard (key hash), queues the
// parts on the shards' threads and merges the parts' answers into one response (RequestShards).
class ShardedServer {
 public:
  using Handler = std::function<void(const RequestMeta&, const RequestData&)>;

  ShardedServer(Session& session, int app_id, size_t value_size, Handler handler);  // src/session/
  ShardedServer(Node& node, int app_id, size_t value_size, Handler handler);
  ~ShardedServer();
  ShardedServer(const ShardedServer&) = delete;
  ShardedServer& operator=(const ShardedServer&) = delete;

  // Lets pushes of float values be summed into the store as they arrive (the default handler;
  // over TCP, see UcxTransport). InPlaceTargets runs on the receiving thread while it holds
  // `shard` for the push: it fills `targets` with each key's stored values, `lengths[i]` of
  // them, and returns true, or returns false (a key not stored yet, stored with another length,
  // or held by a response in flight) to have the push handled the usual way. Call before Start.
  using InPlaceTargets =
      std::function<bool(int shard, const Key* keys, size_t n, const std::vector<size_t>& lengths,
                         std::vector<float*>* targets)>;
  void SetInPlaceSum(InPlaceTargets targets);
  // How many pushes were summed as they arrived.
  int64_t pushes_summed_in_place() const;
  // Starts handling requests, those queued before included. Call once the handler's state exists.
  void Start();
  int num_shards() const;
  int rank() const;
  Reducer& reducer();
  // A recycled buffer of `bytes` bytes (for stored values: fresh allocations would cost a page
  // fault per 4 KiB on every copy-on-write).
  Buffer Allocate(size_t bytes, uint8_t** writable);
  // Tells the scheduler's telemetry that the handler now holds `keys` more keys.
  void AddKeys(int64_t keys);
  // Answers one part of a request (exactly once per handler call). `values` is a gather list
  // (for instance one buffer per key, straight from the store): it is sent without copying, so
  // its buffers must not change until their owners are released.
  void Respond(const RequestMeta& meta, Buffer keys, std::vector<Buffer> values, Buffer lens,
               const ResponseStamp& stamp = {});
  void RespondError(const RequestMeta& meta, const std::string& error);

 private:
  std::unique_ptr<RequestShards> shards_;
};

}  // namespace detail
}  // namespace pacer
