#include "ps/routing.h"

#include <algorithm>

namespace pacer {

Router::Router(int num_servers) : num_servers_(num_servers) {
  // begin_s = floor(s * 2^64 / S): the widths differ by at most one.
  for (int s = 0; s < num_servers; ++s) {
    unsigned __int128 begin = (static_cast<unsigned __int128>(s) << 64) / num_servers;
    ranges_.push_back({static_cast<uint64_t>(begin), s});
  }
}

int Router::ServerOf(Key key) const {
  uint64_t spread = Spread(key);
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), spread,
                             [](uint64_t m, const Range& r) { return m < r.begin; });
  return std::prev(it)->server;
}

std::vector<std::vector<size_t>> Router::Slice(const Key* keys, size_t n) const {
  std::vector<std::vector<size_t>> slices(num_servers_);
  for (size_t i = 0; i < n; ++i) slices[ServerOf(keys[i])].push_back(i);
  return slices;
}

}  // namespace pacer
