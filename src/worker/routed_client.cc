#include "pacer/detail/routed_client.h"

#include <cstring>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/messages/request_validation.h"
#include "worker/inflight_requests.h"

namespace pacer {
namespace detail {

RoutedClient::RoutedClient(Node& node, int app_id, size_t value_size)
    : requests_(std::make_shared<InflightRequests>(node, app_id, value_size)) {
  if (node.role() != Role::kWorker) {
    throw Error("rank " + std::to_string(node.rank()) + " is a " + RoleName(node.role()) +
                ", not a worker: it cannot host a KVWorker");
  }
  std::weak_ptr<InflightRequests> weak = requests_;
  requests_->client_id = requests_->node.dispatcher().AttachClient(
      [weak](Message&& msg) {
        if (auto state = weak.lock()) state->OnResponse(std::move(msg));
      },
      [weak](const DecodedHeader& header) -> uint8_t* {
        auto state = weak.lock();
        return state ? state->Place(header) : nullptr;
      });
  requests_->failure_watch = requests_->node.cluster().WatchFailure([weak](const std::string& why) {
    if (auto state = weak.lock()) state->tracker.FailAll(why);
  });
}

RoutedClient::~RoutedClient() {
  requests_->failure_watch.reset();  // first: a watcher running now holds no last reference
  requests_->node.dispatcher().DetachClient(requests_->client_id);
}

int RoutedClient::Submit(Request request) {
  InflightRequests& s = *requests_;
  const bool push = request.op != Operation::kPull;
  const Key* keys = request.keys.as<Key>();
  const size_t n = request.keys.count<Key>();
  const int32_t* lens = request.lens.as<int32_t>();
  const size_t num_lens = request.lens.count<int32_t>();
  std::string error;
  if (push && request.values.size() % s.value_size != 0) {
    error = std::to_string(request.values.size()) + " bytes of values is not a multiple of " +
            std::to_string(s.value_size);
  } else {
    error = ValidateKeyValues(keys, n, lens, num_lens,
                              push ? request.values.size() / s.value_size : 0, push);
  }
  if (!error.empty()) {
    throw Error(s.Prefix() + "invalid " + OperationName(request.op) + ": " + error);
  }

  auto pending = std::make_shared<InflightRequests::Pending>();
  pending->answer = request.sync.answer;
  const Operation op = request.op;
  PullDestination destination = std::move(request.destination);
  pending->request = std::move(request);
  // Each server part: the send completes, the response arrives. The parts are counted as they
  // are sent; a placeholder part keeps the request open until then.
  int ts = s.tracker.Start(1);
  InflightRequests::Cut cut = s.CutParts(ts, *pending, op, nullptr);
  if (op != Operation::kPush) {
    pending->pull = std::make_unique<PullAssembly>(
        pending->request.keys, static_cast<int>(cut.size()), std::move(destination), s.value_size);
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.pending[ts] = pending;
  }
  s.SendParts(ts, std::move(cut));
  s.PartDone(ts, "");  // the placeholder that kept the request open while its parts were sent
  return ts;
}

Buffer RoutedClient::Copy(const void* data, size_t bytes) {
  uint8_t* out = nullptr;
  Buffer copy = requests_->pool.Allocate(bytes, &out);
  if (bytes > 0) std::memcpy(out, data, bytes);
  return copy;
}

Buffer RoutedClient::SumOf(const std::vector<Span<const float>>& inputs) {
  if (inputs.empty() || inputs.size() > Reducer::kMaxInputs) {
    throw Error("PushSum of " + std::to_string(inputs.size()) + " local buffers; between 1 and " +
                std::to_string(Reducer::kMaxInputs) + " are supported");
  }
  std::vector<ConstArray> arrays;
  for (const Span<const float>& in : inputs) {
    if (in.size() != inputs[0].size()) {
      throw Error("PushSum: local buffer " + std::to_string(arrays.size()) + " holds " +
                  std::to_string(in.size()) + " values, buffer 0 holds " +
                  std::to_string(inputs[0].size()));
    }
    arrays.push_back({in.data(), DType::kF32});
  }
  uint8_t* out = nullptr;
  Buffer sum = requests_->pool.Allocate(inputs[0].size() * sizeof(float), &out);
  requests_->node.reducer().Sum(arrays, {out, DType::kF32}, inputs[0].size());
  return sum;
}

void RoutedClient::Wait(int timestamp) {
  auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(requests_->node.config().timeout_s * 1000));
  try {
    requests_->tracker.Wait(timestamp, timeout, /*throw_on_timeout=*/true, &requests_->spin,
                            &requests_->node.transport());
  } catch (const TimeoutError&) {
    Abandon(timestamp);  // its late answers are dropped
    throw;
  }
}

void RoutedClient::Abandon(int timestamp) {
  std::lock_guard<std::mutex> lock(requests_->mu);
  requests_->pending.erase(timestamp);
}

bool RoutedClient::Wait(int timestamp, std::chrono::milliseconds timeout) {
  return requests_->tracker.Wait(timestamp, timeout, /*throw_on_timeout=*/false, &requests_->spin,
                                 &requests_->node.transport());
}

}  // namespace detail
}  // namespace pacer
