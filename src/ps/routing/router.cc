#include "ps/routing/router.h"

#include <algorithm>
#include <cstring>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

Router::Router(int num_servers, int ranges_per_server) : num_servers_(num_servers) {
  if (num_servers < 1 || ranges_per_server < 1) {
    throw Error(StrCat("a routing table of ", num_servers, " servers with ", ranges_per_server,
                       " ranges each"));
  }
  // begin_i = floor(i * 2^64 / R): the widths differ by at most one. Server s owns the s-th block
  // of ranges_per_server ranges, so each server's share is one contiguous stretch at first.
  const int count = num_servers * ranges_per_server;
  for (int i = 0; i < count; ++i) {
    unsigned __int128 begin = (static_cast<unsigned __int128>(i) << 64) / count;
    ranges_.push_back({static_cast<uint64_t>(begin), i / ranges_per_server});
  }
}

// The bounds are floor(i * 2^64 / R): i = floor(spread * R / 2^64) has begin_i <= spread, and
// only where a bound's floor lands exactly on `spread` is the range the next one. O(1), where a
// binary search over the ranges cost a quarter more per key (the request path's slicing).
int Router::RangeOf(Key key) const {
  const uint64_t spread = Spread(key);
  const size_t count = ranges_.size();
  size_t i = static_cast<size_t>((static_cast<unsigned __int128>(spread) * count) >> 64);
  if (i + 1 < count && ranges_[i + 1].begin <= spread) ++i;
  return static_cast<int>(i);
}

void Router::Move(int range, int server) {
  if (range < 0 || range >= num_ranges()) {
    throw Error(
        StrCat("range ", range, " does not exist: the table has ranges 0..", num_ranges() - 1));
  }
  if (server < 0 || server >= num_servers_) {
    throw Error(
        StrCat("server ", server, " does not exist: the job has servers 0..", num_servers_ - 1));
  }
  ranges_[range].server = server;
  ++epoch_;
}

std::vector<std::vector<size_t>> Router::Slice(const Key* keys, size_t n) const {
  std::vector<std::vector<size_t>> slices(num_servers_);
  for (size_t i = 0; i < n; ++i) slices[ServerOf(keys[i])].push_back(i);
  return slices;
}

// Layout: epoch (int64), range count (int32), then each range's owner (int32). The bounds follow
// from the count.
std::string Router::Encode() const {
  std::string bytes(sizeof(int64_t) + sizeof(int32_t) * (1 + ranges_.size()), '\0');
  char* out = &bytes[0];
  std::memcpy(out, &epoch_, sizeof(epoch_));
  const int32_t count = num_ranges();
  std::memcpy(out + sizeof(int64_t), &count, sizeof(count));
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const int32_t server = ranges_[i].server;
    std::memcpy(out + sizeof(int64_t) + sizeof(int32_t) * (1 + i), &server, sizeof(server));
  }
  return bytes;
}

Router Router::Decode(const std::string& bytes, int num_servers) {
  int32_t count = 0;
  if (bytes.size() >= sizeof(int64_t) + sizeof(int32_t)) {
    std::memcpy(&count, bytes.data() + sizeof(int64_t), sizeof(count));
  }
  if (count < 1 || count % num_servers != 0 ||
      bytes.size() != sizeof(int64_t) + sizeof(int32_t) * (1 + static_cast<size_t>(count))) {
    throw Error(StrCat("a routing table of ", bytes.size(), " bytes announcing ", count,
                       " ranges is not a table of ", num_servers, " servers"));
  }
  Router router(num_servers, count / num_servers);
  std::memcpy(&router.epoch_, bytes.data(), sizeof(int64_t));
  for (int32_t i = 0; i < count; ++i) {
    int32_t server = 0;
    std::memcpy(&server, bytes.data() + sizeof(int64_t) + sizeof(int32_t) * (1 + i),
                sizeof(server));
    if (server < 0 || server >= num_servers) {
      throw Error(
          StrCat("a routing table gives range ", i, " to server ", server, " of ", num_servers));
    }
    router.ranges_[i].server = server;
  }
  return router;
}

}  // namespace pacer
