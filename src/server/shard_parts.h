#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/buffer_pool.h"
#include "pacer/detail/sharded_server.h"
#include "pacer/types.h"

namespace pacer {
namespace detail {

// The shard of `shards` that `key` belongs to, always the same.
int ShardOfKey(Key key, int shards);

// The byte offset of each key's values in a request's `values_bytes` of values (n + 1 entries):
// `lens[i]` values of `value_size` bytes each, or all keys alike where `lens` is null.
std::vector<uint64_t> KeyOffsets(const int32_t* lens, size_t n, size_t value_size,
                                 size_t values_bytes);

// One shard's part of a request.
struct ShardPart {
  int shard;
  RequestData data;
};

// A request (its keys, lengths, and values where `push`) cut into parts for `shards` shards. Keys
// with large values (at least 64 KiB each on average) go as runs of consecutive keys of one
// shard, views of the request; small ones as one part per shard, their values gathered into one
// buffer from `pool` (fewer, larger tasks). A request of one shard is one part, as it came.
std::vector<ShardPart> SplitByShard(const Buffer& keys, const Buffer& lens, const Buffer& values,
                                    bool push, size_t value_size, int shards, BufferPool& pool);

}  // namespace detail
}  // namespace pacer
