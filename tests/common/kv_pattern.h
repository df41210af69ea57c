#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "pacer/types.h"

namespace pacer {
namespace testing {

// A key set with per-key value counts, the same on every worker that draws it from the same seed.
struct KeySet {
  std::vector<Key> keys;
  std::vector<int> lens;
  size_t total() const {
    size_t n = 0;
    for (int l : lens) n += static_cast<size_t>(l);
    return n;
  }
};

// Up to `max_keys` distinct keys from [base, base + span); each key's count is log-uniform in
// [1, max_len], so one draw mixes tiny and large values.
inline KeySet RandomKeySet(std::mt19937_64& rng, Key base, Key span, int max_keys, int max_len) {
  std::set<Key> keys;
  int n = std::uniform_int_distribution<int>(1, max_keys)(rng);
  while (static_cast<int>(keys.size()) < n) keys.insert(base + rng() % span);
  KeySet set{std::vector<Key>(keys.begin(), keys.end()), {}};
  int max_bits = 0;
  while ((1 << (max_bits + 1)) <= max_len) ++max_bits;
  for (size_t i = 0; i < set.keys.size(); ++i) {
    int bits = std::uniform_int_distribution<int>(0, max_bits)(rng);
    int lo = (1 << bits) / 2 + 1, hi = std::min(1 << bits, max_len);
    set.lens.push_back(std::uniform_int_distribution<int>(std::min(lo, hi), hi)(rng));
  }
  return set;
}

// Worker w's j-th value of `key`: small integers, so sums are exact in any arithmetic type
// (uint8 sums wrap, exactly, modulo 256).
template <typename T>
T ValueOf(int worker, Key key, size_t j) {
  return static_cast<T>(
      static_cast<int64_t>((key * 31 + j * 7 + static_cast<uint64_t>(worker) * 13) % 17) - 8);
}

template <typename T>
std::vector<T> ValuesOf(int worker, const KeySet& set) {
  std::vector<T> vals;
  vals.reserve(set.total());
  for (size_t i = 0; i < set.keys.size(); ++i) {
    for (int j = 0; j < set.lens[i]; ++j) vals.push_back(ValueOf<T>(worker, set.keys[i], j));
  }
  return vals;
}

// What the default server holds after `workers` workers pushed the set once each.
template <typename T>
std::vector<T> SumOverWorkers(int workers, const KeySet& set) {
  std::vector<T> sum = ValuesOf<T>(0, set);
  for (int w = 1; w < workers; ++w) {
    std::vector<T> v = ValuesOf<T>(w, set);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = static_cast<T>(sum[i] + v[i]);
  }
  return sum;
}

}  // namespace testing
}  // namespace pacer
