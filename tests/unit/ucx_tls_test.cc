#include <gtest/gtest.h>

#include "ps/transport/ucx/ucx_transport.h"

namespace pacer {
namespace {

// A UCX_TLS that leaves UCX no shared memory turns the shared-memory ring off too.
TEST(UcxTlsTest, DecidesWhetherSharedMemoryIsUsed) {
  EXPECT_TRUE(UcxTlsAllowsSharedMemory(nullptr));
  EXPECT_TRUE(UcxTlsAllowsSharedMemory("all"));
  EXPECT_TRUE(UcxTlsAllowsSharedMemory("sm,self"));
  EXPECT_TRUE(UcxTlsAllowsSharedMemory("tcp,posix"));
  EXPECT_TRUE(UcxTlsAllowsSharedMemory("^tcp"));
  EXPECT_FALSE(UcxTlsAllowsSharedMemory("tcp"));
  EXPECT_FALSE(UcxTlsAllowsSharedMemory("tcp,self"));
  EXPECT_FALSE(UcxTlsAllowsSharedMemory("^sm"));
  EXPECT_FALSE(UcxTlsAllowsSharedMemory("no-such-transport"));
}

}  // namespace
}  // namespace pacer
