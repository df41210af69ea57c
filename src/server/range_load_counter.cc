#include "server/range_load_counter.h"

namespace pacer {

void RangeLoadCounter::AddPush(const Router& table, const Key* keys, size_t n, const int32_t* lens,
                               size_t value_size, size_t values_bytes) {
  auto bytes_of = [&](size_t i) {
    return static_cast<int64_t>(lens ? static_cast<size_t>(lens[i]) * value_size
                                     : values_bytes / n);
  };
  if (n <= bytes_.size()) {  // few keys: ranges rarely repeat, adding directly is cheaper
    for (size_t i = 0; i < n; ++i) {
      bytes_[table.RangeOf(keys[i])].fetch_add(bytes_of(i), std::memory_order_relaxed);
    }
    return;
  }
  // Per-thread scratch, zero between calls: the request's bytes by range, and the ranges touched.
  thread_local std::vector<int64_t> by_range;
  thread_local std::vector<int> touched;
  by_range.resize(bytes_.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    const int range = table.RangeOf(keys[i]);
    if (by_range[range] == 0) touched.push_back(range);
    by_range[range] += bytes_of(i);
  }
  for (int range : touched) {
    bytes_[range].fetch_add(by_range[range], std::memory_order_relaxed);
    by_range[range] = 0;
  }
  touched.clear();
}

std::vector<int64_t> RangeLoadCounter::Take() {
  std::vector<int64_t> taken(bytes_.size());
  for (size_t r = 0; r < bytes_.size(); ++r) {
    taken[r] = bytes_[r].exchange(0, std::memory_order_relaxed);
  }
  return taken;
}

}  // namespace pacer
