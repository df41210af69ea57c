#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>

namespace pacer {

// A transparent huge page on x86-64.
constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` rounded up to whole huge pages, aligned to one and advised onto transparent huge pages
// (a hint the kernel may ignore, and the only way to them where its THP mode is `madvise`).
// Hardware prefetchers stop at
// page boundaries, and a copy between processes pins each page it touches. Free with std::free;
// nullptr when out of memory.
inline void* AllocateOnHugePages(size_t bytes) {
  const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, rounded == 0 ? kHugePageBytes : rounded);
  if (p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

}  // namespace pacer
