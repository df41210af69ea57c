#pragma once

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "server/sync_engine.h"

namespace pacer {

inline Buffer Floats(std::vector<float> v) { return Buffer::FromVector(std::move(v)); }

// An engine over a few keys with plain SGD at lr = 1 (w -= grad_scale * g): updates are exact
// sums that the tests can write down.
class Engine {
 public:
  Engine(int workers, const std::string& mode, const std::string& optimizer = "sgd:lr=1")
      : reducer_(MakeCpuReducer(1)),
        engine_({workers, SyncMode::Parse(mode), OptimizerSpec::Parse(optimizer)}, *reducer_,
                [](size_t bytes, uint8_t** out) { return Buffer::Allocate(bytes, out); }) {}

  SyncEngine* operator->() { return &engine_; }
  void Init(Key key, std::vector<float> values) {
    engine_.Init(key, 0, values.data(), values.size());
  }
  void Push(Key key, int worker, int64_t clock, std::vector<float> g, double weight = 1,
            int64_t version = 0) {
    engine_.Push(key, {worker, clock, version, weight, Floats(std::move(g))});
  }
  // A push of `worker`'s that carries the gradients of `relayed` too (g: their sum).
  void Relay(Key key, int worker, std::vector<int> relayed, int64_t clock, std::vector<float> g,
             double weight) {
    engine_.Push(key, {worker, clock, 0, weight, Floats(std::move(g)), std::move(relayed)});
  }
  // Whether a pull for `clock` (of `worker`'s, or of none) is served at once; a pull left
  // waiting sets *served later.
  bool PullNow(Key key, int64_t clock, bool* served = nullptr, int worker = -1) {
    auto flag = std::make_shared<bool>(false);
    bool* out = served ? served : flag.get();
    *out = false;
    engine_.Pull(
        {key}, clock, [out, flag] { *out = true; }, worker);
    return *out;
  }
  std::vector<float> Values(Key key) {
    const Buffer* b = engine_.Values(key);
    return std::vector<float>(b->as<float>(), b->as<float>() + b->count<float>());
  }

 private:
  std::unique_ptr<Reducer> reducer_;
  SyncEngine engine_;
};

// Workers act in a random order; one that is waiting for its pull cannot act. At every start of
// an iteration, its clock minus the clock of the slowest worker (pushes it issued) is the gap.
// The last worker is slow: it gets a turn a quarter as often.
// With `among`, only those workers' gaps to the slowest of them count.
inline int MaxClockGap(const std::string& mode, int workers, int iterations, uint64_t seed,
                       std::vector<int> among = {}) {
  Engine e(workers, mode);
  e.Init(3, {0});
  std::mt19937_64 rng(seed);
  std::vector<int64_t> clock(workers, 0);  // the iteration each worker computes
  std::vector<std::shared_ptr<bool>> ready(workers);
  if (among.empty()) {
    for (int w = 0; w < workers; ++w) among.push_back(w);
  }
  int max_gap = 0;
  auto start = [&](int w) {
    if (std::find(among.begin(), among.end(), w) == among.end()) return;
    int64_t slowest = clock[among[0]];
    for (int v : among) slowest = std::min(slowest, clock[v]);
    max_gap = std::max(max_gap, static_cast<int>(clock[w] - slowest));
  };
  for (int w = 0; w < workers; ++w) start(w);
  for (int step = 0; step < iterations * workers * 4; ++step) {
    int w = static_cast<int>(rng() % (workers + 2));
    if (w >= workers) w = static_cast<int>(rng() % (workers - 1));
    if (w == workers - 1 && rng() % 4 != 0) continue;
    if (ready[w]) {
      if (!*ready[w]) continue;  // still blocked in its pull
      ready[w].reset();
      start(w);
      continue;
    }
    if (clock[w] >= iterations) continue;
    e.Push(3, w, clock[w], {1});
    ++clock[w];
    ready[w] = std::make_shared<bool>(false);
    auto flag = ready[w];
    e->Pull(
        {3}, clock[w], [flag] { *flag = true; }, w);
  }
  return max_gap;
}

}  // namespace pacer
