#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pacer/types.h"

namespace pacer {

// Key placement: a table of ranges of the *spread* key space, each owned by one server. A key is
// spread by Fibonacci hashing (multiplication by 2^64 / golden ratio, a bijection): consecutive
// keys land on points of a low-discrepancy sequence, so small keys 0, 1, 2, ... divide evenly over
// equal ranges (within one or two keys), and the chunks of a large tensor (consecutive keys) spread
// over all servers. Ownership stays a set of contiguous ranges that later work can version and
// move range by range.
class Router {
 public:
  struct Range {
    uint64_t begin;  // first spread key of the range
    int server;      // server index 0..num_servers-1
  };

  // Splits the spread key space into num_servers equal ranges.
  explicit Router(int num_servers);

  static uint64_t Spread(Key key) { return key * 0x9E3779B97F4A7C15ULL; }

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
