#include "pacer/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace pacer {

Buffer Buffer::Allocate(size_t size, uint8_t** writable) {
  constexpr size_t kAlign = 64;
  size_t rounded = (size + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (p == nullptr) throw std::bad_alloc();
  *writable = static_cast<uint8_t*>(p);
  return Buffer(p, size, std::shared_ptr<const void>(p, [](const void* q) {
                  std::free(const_cast<void*>(q));
                }));
}

Buffer Buffer::Copy(const void* data, size_t size) {
  uint8_t* out = nullptr;
  Buffer b = Allocate(size, &out);
  if (size > 0) std::memcpy(out, data, size);
  return b;
}

}  // namespace pacer
