#pragma once

#include <cstddef>
#include <vector>

#include "pacer/buffer.h"

namespace pacer {

// items[positions[0]], items[positions[1]], ... in a new buffer.
template <typename T>
Buffer Gather(const T* items, const std::vector<size_t>& positions) {
  std::vector<T> out(positions.size());
  for (size_t i = 0; i < positions.size(); ++i) out[i] = items[positions[i]];
  return Buffer::FromVector(std::move(out));
}

}  // namespace pacer
