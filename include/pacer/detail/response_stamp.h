#pragma once

#include <cstdint>

namespace pacer {

/// What a response may tell a worker besides values (merged over the parts of a request): the
/// server's side stamps it, the worker's side reads it. ParameterServer and GradientSync use it
/// between themselves; a KVServer handler has no need of it.
struct ResponseStamp {
  int64_t version = -1;         ///< lowest version served; -1: none
  int64_t complete_clock = -1;  ///< lowest completed clock served; -1: none
  int64_t clock = -1;           ///< a switch's prepared clock (the highest over the parts)
  int64_t unchanged_keys = 0;   ///< keys answered with no values: the worker keeps its own (SMS)

  /// Folds in another part's stamp: the lowest version and completed clock (of those set), the
  /// highest clock, the sum of unchanged keys.
  void Merge(const ResponseStamp& o) {
    auto lowest = [](int64_t a, int64_t b) { return a < 0 ? b : b < 0 ? a : (a < b ? a : b); };
    version = lowest(version, o.version);
    complete_clock = lowest(complete_clock, o.complete_clock);
    clock = clock > o.clock ? clock : o.clock;
    unchanged_keys += o.unchanged_keys;
  }
};

}  // namespace pacer
