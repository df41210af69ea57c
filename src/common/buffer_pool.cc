#include "common/buffer_pool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "common/huge_pages.h"

namespace pacer {
namespace {

constexpr int kMinClass = 12;        // 4 KiB
constexpr int kMinCarvedClass = 18;  // 256 KiB
constexpr int kHugePageClass = 21;   // kHugePageBytes
constexpr int kClasses = 48;

static_assert(size_t{1} << kHugePageClass == kHugePageBytes);

int ClassOf(size_t size) {
  int c = kMinClass;
  while ((size_t{1} << c) < size) ++c;
  return c;
}

bool Carved(int c) { return c >= kMinCarvedClass && c < kHugePageClass; }

void* AllocateHuge(size_t bytes) {
  void* p = AllocateOnHugePages(bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

struct BufferPool::Cache {
  explicit Cache(size_t max) : max_cached(max), free_lists(kClasses) {}
  ~Cache() {
    for (int c = 0; c < kClasses; ++c) {
      if (Carved(c)) continue;  // their memory is the slabs'
      for (void* p : free_lists[c]) std::free(p);
    }
    for (void* slab : slabs) std::free(slab);
  }

  void* Take(int c) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!free_lists[c].empty()) {
        void* p = free_lists[c].back();
        free_lists[c].pop_back();
        if (!Carved(c)) cached -= size_t{1} << c;
        return p;
      }
    }
    if (c >= kHugePageClass) return AllocateHuge(size_t{1} << c);
    if (Carved(c)) return CarveSlab(c);
    void* p = std::aligned_alloc(64, size_t{1} << c);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }

  void Give(void* p, int c) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (Carved(c)) {
        free_lists[c].push_back(p);
        return;
      }
      if (cached + (size_t{1} << c) <= max_cached) {
        free_lists[c].push_back(p);
        cached += size_t{1} << c;
        return;
      }
    }
    std::free(p);
  }

  // Cuts a fresh huge-page slab into buffers of class c: returns the first, keeps the others
  // (the next Take gets the one right after it).
  void* CarveSlab(int c) {
    auto* slab = static_cast<uint8_t*>(AllocateHuge(size_t{1} << kHugePageClass));
    const size_t size = size_t{1} << c;
    const size_t pieces = size_t{1} << (kHugePageClass - c);
    std::lock_guard<std::mutex> lock(mu);
    slabs.push_back(slab);
    for (size_t i = pieces; i-- > 1;) free_lists[c].push_back(slab + i * size);
    return slab;
  }

  const size_t max_cached;
  std::mutex mu;
  std::vector<std::vector<void*>> free_lists;
  std::vector<void*> slabs;
  size_t cached = 0;  // bytes in the free lists of classes that are not carved
};

BufferPool::BufferPool(size_t max_cached_bytes)
    : cache_(std::make_shared<Cache>(max_cached_bytes)) {}

Buffer BufferPool::Allocate(size_t size, uint8_t** writable) {
  const int c = ClassOf(size);
  void* p = cache_->Take(c);
  *writable = static_cast<uint8_t*>(p);
  std::shared_ptr<Cache> cache = cache_;
  return Buffer(p, size, std::shared_ptr<const void>(p, [cache, c](const void* q) {
                  cache->Give(const_cast<void*>(q), c);
                }));
}

}  // namespace pacer
