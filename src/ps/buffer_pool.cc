#include "ps/buffer_pool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace pacer {
namespace {

constexpr int kMinClass = 12;  // 4 KiB
constexpr int kClasses = 48;

int ClassOf(size_t size) {
  int c = kMinClass;
  while ((size_t{1} << c) < size) ++c;
  return c;
}

}  // namespace

struct BufferPool::State {
  explicit State(size_t max) : max_cached(max), free_lists(kClasses) {}
  ~State() {
    for (auto& list : free_lists) {
      for (void* p : list) std::free(p);
    }
  }

  void* Take(int c) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!free_lists[c].empty()) {
        void* p = free_lists[c].back();
        free_lists[c].pop_back();
        cached -= size_t{1} << c;
        return p;
      }
    }
    void* p = std::aligned_alloc(64, size_t{1} << c);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }

  void Give(void* p, int c) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (cached + (size_t{1} << c) <= max_cached) {
        free_lists[c].push_back(p);
        cached += size_t{1} << c;
        return;
      }
    }
    std::free(p);
  }

  const size_t max_cached;
  std::mutex mu;
  std::vector<std::vector<void*>> free_lists;
  size_t cached = 0;
};

BufferPool::BufferPool(size_t max_cached_bytes)
    : state_(std::make_shared<State>(max_cached_bytes)) {}

Buffer BufferPool::Allocate(size_t size, uint8_t** writable) {
  const int c = ClassOf(size);
  void* p = state_->Take(c);
  *writable = static_cast<uint8_t*>(p);
  std::shared_ptr<State> state = state_;
  return Buffer(p, size, std::shared_ptr<const void>(p, [state, c](const void* q) {
                  state->Give(const_cast<void*>(q), c);
                }));
}

}  // namespace pacer
