#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "pacer/buffer.h"

namespace pacer {

// Recycles receive buffers. A fresh allocation of a large buffer costs a page fault per 4 KiB on
// first touch, about as long as moving the data; buffers returned here keep their pages. Sizes
// round up to a power of two (at least 4 KiB); at most `max_cached_bytes` wait for reuse, the rest
// go back to the system. Thread-safe; buffers may outlive the pool.
//
// Buffers of 256 KiB and more lie on transparent huge pages: a rendezvous copy into them pins one
// page instead of 512 per 2 MiB, and sums stream without restarting every 4 KiB. Those under 2 MiB
// are cut from 2 MiB slabs and stay with the pool until it goes: it then holds at most as many as
// were ever in use at once.
class BufferPool {
 public:
  explicit BufferPool(size_t max_cached_bytes = size_t{1} << 30);

  Buffer Allocate(size_t size, uint8_t** writable);

 private:
  // The buffers waiting for reuse and the slabs, shared with the buffers handed out, which may
  // outlive the pool.
  struct Cache;
  std::shared_ptr<Cache> cache_;
};

}  // namespace pacer
