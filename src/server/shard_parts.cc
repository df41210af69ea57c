#include "server/shard_parts.h"

#include <algorithm>

#include "common/gather.h"

namespace pacer {
namespace detail {
namespace {

// Splitmix64's finalizer: the shard must not follow the placement's spread, or every key of one
// server could land on the same few shards.
uint64_t ShardHash(Key key) {
  uint64_t z = key;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr size_t kRunBytes = 64 << 10;

// Which keys (positions in the request) go to which shard, and whether as a run.
struct Part {
  int shard;
  bool run;
  std::vector<size_t> positions;
};

std::vector<Part> Group(const Key* keys, size_t n, size_t bytes_per_key, int shards) {
  std::vector<Part> parts;
  if (bytes_per_key >= kRunBytes) {
    for (size_t i = 0; i < n; ++i) {
      const int shard = ShardOfKey(keys[i], shards);
      if (parts.empty() || parts.back().shard != shard) parts.push_back({shard, true, {}});
      parts.back().positions.push_back(i);
    }
    return parts;
  }
  std::vector<int> part_of_shard(static_cast<size_t>(shards), -1);
  for (size_t i = 0; i < n; ++i) {
    const int shard = ShardOfKey(keys[i], shards);
    if (part_of_shard[shard] < 0) {
      part_of_shard[shard] = static_cast<int>(parts.size());
      parts.push_back({shard, false, {}});
    }
    parts[part_of_shard[shard]].positions.push_back(i);
  }
  return parts;
}

Buffer GatherValues(const Buffer& values, const std::vector<uint64_t>& offsets,
                    const std::vector<size_t>& positions, BufferPool& pool) {
  size_t total = 0;
  for (size_t i : positions) total += offsets[i + 1] - offsets[i];
  uint8_t* out = nullptr;
  Buffer gathered = pool.Allocate(total, &out);
  for (size_t i : positions) {
    std::copy_n(values.data() + offsets[i], offsets[i + 1] - offsets[i], out);
    out += offsets[i + 1] - offsets[i];
  }
  return gathered;
}

}  // namespace

int ShardOfKey(Key key, int shards) {
  return static_cast<int>(ShardHash(key) % static_cast<uint64_t>(shards));
}

std::vector<uint64_t> KeyOffsets(const int32_t* lens, size_t n, size_t value_size,
                                 size_t values_bytes) {
  std::vector<uint64_t> offsets(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    offsets[i + 1] =
        offsets[i] + (lens ? static_cast<uint64_t>(lens[i]) * value_size : values_bytes / n);
  }
  return offsets;
}

std::vector<ShardPart> SplitByShard(const Buffer& keys, const Buffer& lens, const Buffer& values,
                                    bool push, size_t value_size, int shards, BufferPool& pool) {
  const Key* key = keys.as<Key>();
  const size_t n = keys.count<Key>();
  const int32_t* len = lens.as<int32_t>();
  const std::vector<Part> parts = Group(key, n, push ? values.size() / n : 0, shards);
  std::vector<ShardPart> out;
  if (parts.size() == 1) {
    out.push_back({parts[0].shard, {keys, values, lens}});
    return out;
  }
  std::vector<uint64_t> offsets;
  if (push) offsets = KeyOffsets(len, n, value_size, values.size());
  for (const Part& part : parts) {
    RequestData data;
    if (part.run) {  // consecutive keys: views, no copy
      const size_t first = part.positions.front(), count = part.positions.size();
      data.keys = keys.Slice(first * sizeof(Key), count * sizeof(Key));
      if (len) data.lens = lens.Slice(first * sizeof(int32_t), count * sizeof(int32_t));
      if (push) {
        data.values = values.Slice(offsets[first], offsets[first + count] - offsets[first]);
      }
    } else {
      data.keys = Gather(key, part.positions);
      if (len) data.lens = Gather(len, part.positions);
      if (push) data.values = GatherValues(values, offsets, part.positions, pool);
    }
    out.push_back({part.shard, std::move(data)});
  }
  return out;
}

}  // namespace detail
}  // namespace pacer
