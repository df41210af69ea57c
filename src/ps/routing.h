#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pacer/types.h"

namespace pacer {

// Key placement: a table of ranges of the *mixed* key space, each owned by one server. Keys are
// mixed by a bijective 64-bit hash first, so consecutive small keys (0, 1, 2, ...) and the keys of
// one tensor split into chunks spread evenly, while ownership stays a set of contiguous ranges that
// later work can version and move range by range.
class Router {
 public:
  struct Range {
    uint64_t begin;  // first mixed key of the range
    int server;      // server index 0..num_servers-1
  };

  // Splits the mixed key space into num_servers equal ranges.
  explicit Router(int num_servers);

  // Bijective (invertible) mixing of a key: splitmix64's finalizer.
  static uint64_t Mix(Key key);

  int num_servers() const { return num_servers_; }
  int ServerOf(Key key) const;
  const std::vector<Range>& ranges() const { return ranges_; }

  // The positions of `keys` grouped by owning server: result[s] lists, in order, the indices i
  // with ServerOf(keys[i]) == s.
  std::vector<std::vector<size_t>> Slice(const Key* keys, size_t n) const;

 private:
  int num_servers_;
  std::vector<Range> ranges_;  // sorted by begin; ranges_[0].begin == 0
};

}  // namespace pacer
