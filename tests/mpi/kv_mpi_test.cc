// Push/pull between processes over the transport given on the command line.
#include <gtest/gtest.h>

#include "../common/scenarios.h"
#include "mpi_test_config.h"
#include "pacer/session.h"

namespace pacer {
namespace {

TEST(KVMpiTest, SessionRolesFollowRanks) {
  Session session(MpiTestConfig());
  EXPECT_EQ(session.transport_name(), MpiTestConfig().transport);
  const int servers = MpiTestConfig().servers;
  EXPECT_EQ(session.num_servers(), servers);
  if (session.rank() == 0) {
    EXPECT_TRUE(session.is_scheduler());
  } else if (session.rank() <= servers) {
    EXPECT_TRUE(session.is_server());
    EXPECT_EQ(session.role_index(), session.rank() - 1);
  } else {
    EXPECT_TRUE(session.is_worker());
    EXPECT_EQ(session.role_index(), session.rank() - 1 - servers);
  }
  session.Finalize();
}

// Float values, 1 to 2M per key (4 B to 8 MB).
TEST(KVMpiTest, RandomFloatPushPullSumsExactly) {
  Session session(MpiTestConfig());
  testing::RoundsOptions options;
  options.rounds = 12;
  options.max_keys = 12;
  options.max_len = 2 << 20;
  options.seed = 11;
  testing::PushPullRounds<float>(session, options);
  session.Finalize();
}

// Byte values, 1 byte to 8 MB per key; sums wrap modulo 256, exactly.
TEST(KVMpiTest, RandomBytePushPullSumsExactly) {
  Session session(MpiTestConfig());
  testing::RoundsOptions options;
  options.rounds = 12;
  options.max_keys = 12;
  options.max_len = 8 << 20;
  options.seed = 12;
  testing::PushPullRounds<uint8_t>(session, options);
  session.Finalize();
}

// Many small keys per request, spread over every server and request thread.
TEST(KVMpiTest, ManySmallKeysSumExactly) {
  Session session(MpiTestConfig());
  testing::RoundsOptions options;
  options.rounds = 20;
  options.max_keys = 500;
  options.max_len = 64;
  options.seed = 13;
  testing::PushPullRounds<int32_t>(session, options);
  session.Finalize();
}

TEST(KVMpiTest, PullsWithChangingLengthsLandInPlace) {
  Session session(MpiTestConfig());
  testing::PullsWithChangingLengths(session);
  session.Finalize();
}

TEST(KVMpiTest, RequestsBeforeTheServerExistsAreServed) {
  Session session(MpiTestConfig());
  testing::RequestsBeforeServerStarts(session);
  session.Finalize();
}

}  // namespace
}  // namespace pacer
