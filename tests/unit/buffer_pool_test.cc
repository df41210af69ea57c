#include "common/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "common/huge_pages.h"

namespace pacer {
namespace {

uintptr_t Address(const uint8_t* p) { return reinterpret_cast<uintptr_t>(p); }

// 1 MiB buffers are the halves of one huge-page slab, and do not overlap.
TEST(BufferPoolTest, MediumBuffersShareAHugePageSlab) {
  BufferPool pool;
  uint8_t* a = nullptr;
  uint8_t* b = nullptr;
  Buffer first = pool.Allocate(1 << 20, &a);
  Buffer second = pool.Allocate((1 << 20) - 100, &b);
  EXPECT_EQ(Address(a) % kHugePageBytes, 0u);
  EXPECT_EQ(Address(b), Address(a) + (1 << 20));
  std::memset(a, 1, 1 << 20);
  std::memset(b, 2, (1 << 20) - 100);
  EXPECT_EQ(a[(1 << 20) - 1], 1);
  EXPECT_EQ(b[0], 2);
}

TEST(BufferPoolTest, ReturnedBuffersAreReusedLastInFirstOut) {
  BufferPool pool;
  uint8_t* a = nullptr;
  uint8_t* b = nullptr;
  uint8_t* again = nullptr;
  {
    Buffer first = pool.Allocate(4 << 20, &a);
    Buffer second = pool.Allocate(4 << 20, &b);
  }  // destroyed in reverse order: first goes back last
  Buffer reused = pool.Allocate(3 << 20, &again);
  EXPECT_EQ(again, a);
  EXPECT_NE(a, b);
  EXPECT_EQ(Address(a) % kHugePageBytes, 0u);
  uint8_t* small = nullptr;
  Buffer tiny = pool.Allocate(100, &small);
  EXPECT_EQ(Address(small) % 64, 0u);
}

// A pool that may cache nothing still recycles carved buffers (they cannot be freed one by one)
// and frees the others.
TEST(BufferPoolTest, CarvedBuffersStayWithThePool) {
  BufferPool pool(/*max_cached_bytes=*/0);
  uint8_t* a = nullptr;
  uint8_t* again = nullptr;
  { Buffer first = pool.Allocate(512 << 10, &a); }
  Buffer reused = pool.Allocate(512 << 10, &again);
  EXPECT_EQ(again, a);
  EXPECT_EQ(Address(a) % kHugePageBytes, 0u);
}

// Buffers outlive their pool: the slab stays until the last is returned.
TEST(BufferPoolTest, BuffersOutliveThePool) {
  Buffer kept;
  uint8_t* p = nullptr;
  {
    BufferPool pool;
    kept = pool.Allocate(1 << 20, &p);
  }
  std::memset(p, 7, 1 << 20);
  EXPECT_EQ(kept.data()[12345], 7);
}

}  // namespace
}  // namespace pacer
