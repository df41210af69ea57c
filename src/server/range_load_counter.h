#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pacer/types.h"
#include "ps/routing/router.h"

namespace pacer {

// The load SAS balances (--balance=sas): bytes pushed to each key range, counted as requests
// arrive and taken by the server's reporter. A request of more keys than there are ranges adds to
// each range's counter once, not once per key: atomic adds per key would cost the receiving
// thread more than the rest of a small push's handling.
class RangeLoadCounter {
 public:
  explicit RangeLoadCounter(int num_ranges) : bytes_(num_ranges) {}

  // A push of `n` keys: key i carries lens[i] * value_size bytes, or values_bytes / n when
  // `lens` is null. Thread-safe.
  void AddPush(const Router& table, const Key* keys, size_t n, const int32_t* lens,
               size_t value_size, size_t values_bytes);
  // The bytes per range since the last call.
  std::vector<int64_t> Take();

 private:
  std::vector<std::atomic<int64_t>> bytes_;
};

}  // namespace pacer
