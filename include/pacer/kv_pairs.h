#pragma once

#include <vector>

#include "pacer/types.h"

namespace pacer {

// Keys with their values, as ps-lite users know them. Keys are sorted and unique; `lens[i]` is the
// number of values of keys[i], or `lens` is empty and every key has vals.size() / keys.size().
template <typename T>
struct KVPairs {
  std::vector<Key> keys;
  std::vector<T> vals;
  std::vector<int> lens;
};

}  // namespace pacer
