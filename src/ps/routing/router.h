#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pacer/types.h"

namespace pacer {

// Key placement: a table of ranges of the *spread* key space, each owned by one server, versioned
// by an epoch. A key is spread by Fibonacci hashing (multiplication by 2^64 / golden ratio, a
// bijection): consecutive keys land on points of a low-discrepancy sequence, so small keys 0, 1,
// 2, ... divide evenly over equal ranges, and the chunks of a large tensor (consecutive keys)
// spread over all ranges. The space is cut into ranges_per_server ranges per server, the unit that
// load reassignment (SAS) moves; server s starts with the s-th block of them. Every move bumps the
// epoch, so a request routed by an older table can be recognized and redirected.
class Router {
 public:
  static constexpr int kRangesPerServer = 16;

  struct Range {
    uint64_t begin;  // first spread key of the range
    int server;      // server index 0..num_servers-1
  };

  explicit Router(int num_servers, int ranges_per_server = kRangesPerServer);

  static uint64_t Spread(Key key) { return key * 0x9E3779B97F4A7C15ULL; }

  int num_servers() const { return num_servers_; }
  int num_ranges() const { return static_cast<int>(ranges_.size()); }
  int64_t epoch() const { return epoch_; }
  int RangeOf(Key key) const;
  int ServerOf(Key key) const { return ranges_[RangeOf(key)].server; }
  const std::vector<Range>& ranges() const { return ranges_; }

  // Gives `range` to `server` and bumps the epoch. Throws Error naming the range or server when
  // either does not exist.
  void Move(int range, int server);

  // The positions of `keys` grouped by owning server: result[s] lists, in order, the indices i
  // with ServerOf(keys[i]) == s.
  std::vector<std::vector<size_t>> Slice(const Key* keys, size_t n) const;

  // The owners and epoch as bytes (they travel in messages), and back. Decode throws Error
  // naming what is wrong with bytes that are not a table of this job's servers.
  std::string Encode() const;
  static Router Decode(const std::string& bytes, int num_servers);

 private:
  int num_servers_;
  int64_t epoch_ = 0;
  std::vector<Range> ranges_;  // sorted by begin; ranges_[0].begin == 0; fixed bounds
};

}  // namespace pacer
