#include "ps/routing.h"

#include <algorithm>

namespace pacer {

Router::Router(int num_servers) : num_servers_(num_servers) {
  const uint64_t width = UINT64_MAX / static_cast<uint64_t>(num_servers) + 1;
  for (int s = 0; s < num_servers; ++s) ranges_.push_back({width * static_cast<uint64_t>(s), s});
}

uint64_t Router::Mix(Key key) {
  uint64_t z = key;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int Router::ServerOf(Key key) const {
  uint64_t mixed = Mix(key);
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), mixed,
                             [](uint64_t m, const Range& r) { return m < r.begin; });
  return std::prev(it)->server;
}

std::vector<std::vector<size_t>> Router::Slice(const Key* keys, size_t n) const {
  std::vector<std::vector<size_t>> slices(num_servers_);
  for (size_t i = 0; i < n; ++i) slices[ServerOf(keys[i])].push_back(i);
  return slices;
}

}  // namespace pacer
