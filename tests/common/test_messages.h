#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "ps/messages/message.h"
#include "ps/transport/transport.h"

namespace pacer {
namespace testing {

// How long the transports' tests wait for what they expect before they fail.
constexpr auto kMessageDeadline = std::chrono::seconds(120);

// The byte at `i` of the payload of message `index` from `sender`: a pattern that differs by
// sender, message and position, so that a payload from another message, or shifted, shows.
uint8_t PatternByte(int sender, int64_t index, size_t i);

// Message `index` from `sender`: `bytes` of values cut into `fragments` pieces (a gather list),
// and `keys` keys (past kMaxIndexInHeader they travel in the payload, before the values).
Message TestMessage(int sender, int64_t index, size_t bytes, int fragments = 1, int keys = 1);

// Whether `received` is the message TestMessage made for its sender and request id, with `bytes`
// of values and `keys` keys; a failure names what differs.
::testing::AssertionResult Intact(const Message& received, size_t bytes, int keys = 1);

// The messages one rank received, in arrival order.
class Inbox {
 public:
  Transport::ReceiveHandler Handler();
  // Waits until `count` messages came; false (with a failure naming how many came) after the
  // deadline.
  bool WaitFor(size_t count);
  std::vector<Message> All();

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Message> received_;
};

// Counts the completions of sends, and the errors among them.
class Completions {
 public:
  Transport::SendCallback Callback();
  // Waits until `count` sends completed; false after the deadline.
  bool WaitFor(int64_t count);
  int64_t done();
  std::vector<std::string> errors();

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int64_t done_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace testing
}  // namespace pacer
