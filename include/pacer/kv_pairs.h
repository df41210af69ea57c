#pragma once

#include <vector>

#include "pacer/types.h"

namespace pacer {

/// Keys with their values, as ps-lite users know them. Keys are sorted and unique; `lens[i]` is
/// the number of values of keys[i], or `lens` is empty and every key has vals.size() / keys.size().
template <typename T>
struct KVPairs {
  std::vector<Key> keys;  ///< sorted and unique
  std::vector<T> vals;    ///< the keys' values, one key's after another's
  std::vector<int> lens;  ///< values per key, or empty
};

}  // namespace pacer
