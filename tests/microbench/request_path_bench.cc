// Per-message costs of the request path in nanoseconds (Google Benchmark): encoding and decoding
// a message, validating a request, slicing it by server, counting its bytes per key range (SAS),
// tracking it. Run:
//   build/bin/pacer-request-path-bench
// valgrind --tool=callgrind on it counts instructions repeatably on a noisy machine.
#include <benchmark/benchmark.h>

#include <numeric>

#include "ps/messages/message.h"
#include "ps/messages/request_validation.h"
#include "ps/routing/router.h"
#include "server/range_load_counter.h"
#include "worker/request_tracker.h"

namespace pacer {
namespace {

Message MakeRequest(size_t keys, size_t values_per_key) {
  Message msg;
  msg.meta.set_command(proto::PUSH);
  msg.meta.set_sender(3);
  msg.meta.set_client_id(0);
  msg.meta.set_request_id(123456);
  msg.meta.set_value_size(4);
  std::vector<uint64_t> k(keys);
  std::iota(k.begin(), k.end(), 1000);
  msg.keys = Buffer::FromVector(std::move(k));
  std::vector<float> v(keys * values_per_key, 1.0f);
  msg.vals.push_back(Buffer::FromVector(std::move(v)));
  return msg;
}

void BM_EncodeHeader(benchmark::State& state) {
  Message msg = MakeRequest(state.range(0), 1024);
  for (auto _ : state) {
    std::vector<uint8_t> header = EncodeHeader(msg);
    std::vector<Buffer> payload = PayloadFragments(msg);
    benchmark::DoNotOptimize(header.data());
    benchmark::DoNotOptimize(payload.data());
  }
}
BENCHMARK(BM_EncodeHeader)->Arg(1)->Arg(64)->Arg(4096);

void BM_DecodeMessage(benchmark::State& state) {
  Message msg = MakeRequest(state.range(0), 1024);
  std::vector<uint8_t> header = EncodeHeader(msg);
  std::vector<uint8_t> joined;
  for (const Buffer& f : PayloadFragments(msg))
    joined.insert(joined.end(), f.data(), f.data() + f.size());
  Buffer payload = Buffer::FromVector(std::move(joined));
  for (auto _ : state) {
    DecodedHeader decoded;
    std::string error;
    Message out;
    bool ok = DecodeHeader(header.data(), header.size(), 8, &decoded, &error) &&
              DecodePayload(std::move(decoded), payload, &out, &error);
    benchmark::DoNotOptimize(ok);
  }
}
BENCHMARK(BM_DecodeMessage)->Arg(1)->Arg(64)->Arg(4096);

void BM_ValidateRequest(benchmark::State& state) {
  std::vector<Key> keys(state.range(0));
  std::iota(keys.begin(), keys.end(), 0);
  for (auto _ : state) {
    std::string error =
        ValidateKeyValues(keys.data(), keys.size(), nullptr, 0, keys.size() * 8, true);
    benchmark::DoNotOptimize(error);
  }
}
BENCHMARK(BM_ValidateRequest)->Arg(1)->Arg(64)->Arg(4096);

void BM_SliceByServer(benchmark::State& state) {
  Router router(4);
  std::vector<Key> keys(state.range(0));
  std::iota(keys.begin(), keys.end(), 0);
  for (auto _ : state) {
    auto slices = router.Slice(keys.data(), keys.size());
    benchmark::DoNotOptimize(slices.data());
  }
}
BENCHMARK(BM_SliceByServer)->Arg(1)->Arg(64)->Arg(4096);

// What --balance=sas adds to a push on the server's receiving thread: counting its bytes per
// key range.
void BM_CountRangeBytes(benchmark::State& state) {
  Router router(4);
  RangeLoadCounter counter(router.num_ranges());
  std::vector<Key> keys(state.range(0));
  std::iota(keys.begin(), keys.end(), 0);
  for (auto _ : state) {
    counter.AddPush(router, keys.data(), keys.size(), nullptr, 4, 4 * keys.size());
  }
  benchmark::DoNotOptimize(counter.Take().data());
}
BENCHMARK(BM_CountRangeBytes)->Arg(1)->Arg(64)->Arg(4096);

void BM_TrackRequest(benchmark::State& state) {
  RequestTracker tracker(1);
  for (auto _ : state) {
    int ts = tracker.Start(2);
    tracker.PartDone(ts, "");
    if (tracker.PartDone(ts, "")) tracker.Finish(ts, "");
    tracker.Wait(ts, std::chrono::milliseconds(1000), true);
  }
}
BENCHMARK(BM_TrackRequest);

}  // namespace
}  // namespace pacer

BENCHMARK_MAIN();
