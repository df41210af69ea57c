#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "pacer/buffer.h"
#include "pacer/types.h"

namespace pacer {

// SMS's gradient-transfer skip, the server's half (STRAGGLERS.md section 5): the last gradient
// each skipping worker sent for each key, so that a push flagged "same as last" can stand for it.
// Only pushes flagged cache_gradient are kept, and a worker's plain push of the key frees its
// entry, so the memory held is at most (workers skipping) x (bytes of this shard's keys). One per
// request shard, used by its shard only.
class GradientCache {
 public:
  // Keeps a copy of `values` as worker `worker`'s last gradient of `key`.
  void Keep(int worker, Key key, const Buffer& values);
  // Frees what is kept for `worker` and `key` (nothing kept: nothing to do).
  void Forget(int worker, Key key);
  // The gradient kept for `worker` and `key`; throws Error naming the key, the worker and its
  // rank if none is.
  const Buffer& Recall(int worker, int rank, Key key) const;
  // A key moving to another server takes what is kept of it along, so that a skip the worker
  // sends there finds it: Pack returns `state` (the engine's record of `key`) with the key's
  // entries appended, and frees them; Unpack installs them from such a record and returns the
  // engine's part. Unpack throws Error naming the key for a malformed record.
  Buffer Pack(Key key, const Buffer& state);
  Buffer Unpack(Key key, const Buffer& record);
  // The bytes kept for `key`, over the workers.
  int64_t BytesOf(Key key) const;

 private:
  std::map<std::pair<Key, int>, Buffer> kept_;  // by key, then worker
};

}  // namespace pacer
