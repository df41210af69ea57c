// Bad input between processes: clear errors, and servers that keep serving.
#include <gtest/gtest.h>

#include "../common/scenarios.h"
#include "mpi_test_config.h"
#include "pacer/session.h"

namespace pacer {
namespace {

TEST(BadInputMpiTest, CallerErrorsNameWhatIsWrong) {
  Session session(MpiTestConfig());
  testing::CallerErrors(session);
  session.Finalize();
}

TEST(BadInputMpiTest, MalformedPeerMessagesAreRejected) {
  Session session(MpiTestConfig());
  testing::MalformedPeerMessages(session);
  session.Finalize();
}

}  // namespace
}  // namespace pacer
