#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "pacer/buffer.h"
#include "pacer/detail/response_stamp.h"
#include "pacer/span.h"
#include "pacer/types.h"

namespace pacer {

class Node;     // a rank inside a Session (src/ps/node/node.h)
class Session;  // include "pacer/session.h" to make one

namespace detail {

enum class Operation { kPush, kPull, kPushPull };

// Where a pull's results go. `values` is called once, with the total byte count, when every
// server has answered; it returns where to write them, or nullptr if they do not fit (the request
// then fails). `lengths`, if set, is called with the key count and returns where the per-key value
// counts go.
struct PullDestination {
  std::function<uint8_t*(size_t bytes)> values;
  std::function<int32_t*(size_t count)> lengths;
};

// GradientSync's stamps on a request (see proto/meta.proto), and where the response's go.
struct SyncStamp {
  int64_t clock = 0;
  int64_t version = 0;
  double weight = 1;
  bool init = false;
  // A pull: served only once this worker's push of the previous clock has reached the server.
  bool after_own_push = false;
  // Checkpoints: pull each key's whole state instead of its values; with `init`, push such states.
  bool state = false;
  // Lowest version and completed clock over the servers' answers, written before completion.
  std::shared_ptr<ResponseStamp> answer;
  // A push that carries other workers' gradients of its clock too (STRET's relay): their ranks.
  std::vector<int> relayed;
  // SMS's skip: a push whose values the server keeps for the next one, or one without values
  // that stands for what it kept.
  bool cache_gradient = false;
  bool same_as_last = false;
  // SMS's skip, a pull: the worker holds what the server last sent it (of `version`), which a
  // key that moved little since may stand for (ResponseStamp::unchanged_keys).
  bool keep_parameters = false;
};

struct Request {
  Operation op;
  Buffer keys;    // uint64, sorted, unique
  Buffer values;  // pushes only
  Buffer lens;    // int32 per key, or empty
  PullDestination destination;
  std::function<void()> callback;
  int user_command = 0;
  SyncStamp sync;
};

// The bytes under KVWorker<T>: slices each request by the servers that own its keys (the routing
// table), sends the slices, tracks them and assembles pulled values in the caller's buffer. One
// instance per KVWorker.
class RoutedClient {
 public:
  RoutedClient(Session& session, int app_id, size_t value_size);  // src/session/
  RoutedClient(Node& node, int app_id, size_t value_size);
  ~RoutedClient();
  RoutedClient(const RoutedClient&) = delete;
  RoutedClient& operator=(const RoutedClient&) = delete;

  // Validates and sends; returns the request's timestamp. Throws Error on bad input.
  int Submit(Request request);
  // A copy of `bytes` bytes in a recycled buffer (Push copies the caller's vectors: large fresh
  // allocations would cost a page fault per 4 KiB every time).
  Buffer Copy(const void* data, size_t bytes);
  // The element-wise sum of equally long float arrays (at most Reducer::kMaxInputs), made by the
  // session's Reducer in one pass into a recycled buffer. Throws Error naming a mismatched input.
  Buffer SumOf(const std::vector<Span<const float>>& inputs);
  // Throws Error if the request failed or `timestamp` is unknown, TimeoutError after timeout_s.
  void Wait(int timestamp);
  // Returns false if the request has not finished within `timeout`.
  bool Wait(int timestamp, std::chrono::milliseconds timeout);
  // Gives up on a request nobody will wait for: answers that come later are dropped, and none
  // is received into the caller's buffer any more (one already being received there still lands).
  void Abandon(int timestamp);

 private:
  // The requests in flight and what they wait for, shared with the dispatcher's sinks.
  struct InflightRequests;
  std::shared_ptr<InflightRequests> requests_;
};

}  // namespace detail
}  // namespace pacer
