#include "bench_keys.h"

#include <algorithm>

namespace pacer {
namespace bench {

BenchKeys::BenchKeys(const Session& session, int point, int window) {
  const int servers = session.num_servers(), workers = session.num_workers();
  // Key sets per server, in order of discovery, from this point's own key range.
  const int per_server = workers * window + 1;
  std::vector<std::vector<Key>> found(servers);
  int complete = 0;
  for (Key k = Key(point + 1) << 32; complete < servers; ++k) {
    std::vector<Key>& bin = found[session.ServerOfKey(k)];
    if (static_cast<int>(bin.size()) < per_server) {
      bin.push_back(k);
      complete += static_cast<int>(bin.size()) == per_server;
    }
  }
  keys_.assign(workers, std::vector<std::vector<Key>>(window));
  for (int s = 0; s < servers; ++s) {
    for (int w = 0; w < workers; ++w) {
      for (int slot = 0; slot < window; ++slot) {
        keys_[w][slot].push_back(found[s][w * window + slot]);
      }
    }
    shared_.push_back(found[s].back());
  }
  for (auto& per_worker : keys_) {
    for (auto& keys : per_worker) std::sort(keys.begin(), keys.end());
  }
  std::sort(shared_.begin(), shared_.end());
}

}  // namespace bench
}  // namespace pacer
