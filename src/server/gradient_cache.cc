#include "server/gradient_cache.h"

#include <iterator>
#include <limits>

#include "common/byte_stream.h"
#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

void GradientCache::Keep(int worker, Key key, const Buffer& values) {
  kept_[{key, worker}] = Buffer::Copy(values.data(), values.size());
}

void GradientCache::Forget(int worker, Key key) { kept_.erase({key, worker}); }

const Buffer& GradientCache::Recall(int worker, int rank, Key key) const {
  const auto it = kept_.find({key, worker});
  if (it == kept_.end()) {
    throw Error(StrCat("key ", key, ": worker ", worker, " (rank ", rank,
                       ") sent 'same as last', but no gradient of it is kept for that worker"));
  }
  return it->second;
}

Buffer GradientCache::Pack(Key key, const Buffer& state) {
  const auto first = kept_.lower_bound({key, std::numeric_limits<int>::min()});
  const auto last = kept_.upper_bound({key, std::numeric_limits<int>::max()});
  Buffer record = EncodeRecord(Buffer::Allocate, [&](ByteWriter& out) {
    out.PutArray(state.data(), state.size());
    out.Put(static_cast<uint64_t>(std::distance(first, last)));
    for (auto it = first; it != last; ++it) {
      out.Put(static_cast<int32_t>(it->first.second));
      out.PutArray(it->second.data(), it->second.size());
    }
  });
  kept_.erase(first, last);
  return record;
}

Buffer GradientCache::Unpack(Key key, const Buffer& record) {
  ByteReader in(record.data(), record.size(), StrCat("key ", key, ": the moved record"));
  size_t state_bytes = 0;
  const uint8_t* state = in.GetArrayBytes<uint8_t>(&state_bytes);
  std::map<std::pair<Key, int>, Buffer> entries;
  for (uint64_t n = in.Get<uint64_t>(); n > 0; --n) {
    const int worker = in.Get<int32_t>();
    size_t bytes = 0;
    const uint8_t* values = in.GetArrayBytes<uint8_t>(&bytes);
    entries[{key, worker}] = Buffer::Copy(values, bytes);
  }
  if (!in.done()) throw Error(StrCat(in.what(), ": bytes left after the kept gradients"));
  kept_.insert(entries.begin(), entries.end());
  return record.Slice(static_cast<size_t>(state - record.data()), state_bytes);
}

int64_t GradientCache::BytesOf(Key key) const {
  int64_t bytes = 0;
  for (auto it = kept_.lower_bound({key, std::numeric_limits<int>::min()});
       it != kept_.end() && it->first.first == key; ++it) {
    bytes += static_cast<int64_t>(it->second.size());
  }
  return bytes;
}

}  // namespace pacer
