#include "ps/cluster/dispatcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pacer {
namespace {

// A dispatcher of worker rank 3 that records what it rejects.
class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest()
      : dispatcher_(
            Role::kWorker, 3,
            [this](const proto::Meta& request, const std::string& error) {
              rejected_.push_back(proto::Command_Name(request.command()) + ": " + error);
            },
            std::chrono::milliseconds(1000)) {}

  static Message Request(proto::Command command) {
    Message msg;
    msg.meta.set_command(command);
    msg.meta.set_sender(0);
    return msg;
  }

  Dispatcher dispatcher_;
  std::vector<std::string> rejected_;
};

TEST_F(DispatcherTest, HeldRequestsReachTheSinkThatTakesThemLater) {
  dispatcher_.Hold(proto::RELAY_ORDER);
  dispatcher_.Dispatch(Request(proto::RELAY_ORDER));
  dispatcher_.Dispatch(Request(proto::RELAY_ORDER));
  int taken = 0;
  dispatcher_.Take(proto::RELAY_ORDER, [&](Message&&) { ++taken; });
  EXPECT_EQ(taken, 2);
  dispatcher_.Dispatch(Request(proto::RELAY_ORDER));
  EXPECT_EQ(taken, 3);
  EXPECT_TRUE(rejected_.empty());
}

// A worker whose GradientSync has ended answers the scheduler's relay orders at once: before, they
// were held for a sink that never came back, and the scheduler waited out its timeout.
TEST_F(DispatcherTest, RequestsAfterTheirSinkIsGoneAreRefusedNamingTheRank) {
  dispatcher_.Hold(proto::RELAY_ORDER);
  int taken = 0;
  dispatcher_.Take(proto::RELAY_ORDER, [&](Message&&) { ++taken; });
  dispatcher_.Take(proto::RELAY_ORDER, nullptr);
  dispatcher_.Dispatch(Request(proto::RELAY_ORDER));
  EXPECT_EQ(taken, 0);
  EXPECT_EQ(rejected_,
            std::vector<std::string>{"RELAY_ORDER: worker rank 3 takes no RELAY_ORDER messages"});
}

TEST_F(DispatcherTest, OneWayMessagesNobodyTakesAreDropped) {
  dispatcher_.Dispatch(Request(proto::RELAY_STOP));
  EXPECT_TRUE(rejected_.empty());
}

}  // namespace
}  // namespace pacer
