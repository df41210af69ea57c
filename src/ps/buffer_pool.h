#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "pacer/buffer.h"

namespace pacer {

// Recycles receive buffers. A fresh allocation of a large buffer costs a page fault per 4 KiB on
// first touch (for 1 MiB that is about as long as moving the data); buffers returned here keep
// their pages. Sizes round up to a power of two (at least 4 KiB); at most `max_cached_bytes` wait
// for reuse, the rest go back to the system. Thread-safe; buffers may outlive the pool.
class BufferPool {
 public:
  explicit BufferPool(size_t max_cached_bytes = size_t{1} << 30);

  Buffer Allocate(size_t size, uint8_t** writable);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace pacer
