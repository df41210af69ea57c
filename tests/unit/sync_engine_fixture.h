#pragma once

#include <memory>
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
  // Whether a pull for `clock` is served at once; a pull left waiting sets *served later.
  bool PullNow(Key key, int64_t clock, bool* served = nullptr) {
    auto flag = std::make_shared<bool>(false);
    bool* out = served ? served : flag.get();
    *out = false;
    engine_.Pull({key}, clock, [out, flag] { *out = true; });
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

}  // namespace pacer
