// EagerPath: payloads below the rendezvous threshold travel as their message's data, whole or as a
// gather list; those UCX sends eagerly arrive in order (UCX may still fetch the larger ones by its
// own rendezvous, which can let a later message overtake them); what is no message is dropped
// and what follows still arrives.
#include <gtest/gtest.h>

#include <vector>

#include "ps/transport/ucx/active_message_ids.h"
#include "ucx_pair.h"

namespace pacer {
namespace testing {
namespace {

TEST(EagerPathTest, SmallPayloadsArriveInOrderWholeAndGathered) {
  UcxPair pair(WriterOptions(), ReaderOptions());
  const size_t kSizes[] = {0, 1, 100, 4096, 8000};
  int64_t index = 0;
  for (int fragments : {1, 3}) {
    for (size_t bytes : kSizes) {
      pair.transport(0).Send(1, TestMessage(0, index++, bytes, fragments), nullptr);
    }
  }
  ASSERT_TRUE(pair.inbox(1).WaitFor(index));
  int64_t next = 0;
  for (const Message& msg : pair.inbox(1).All()) {
    ASSERT_EQ(msg.meta.request_id(), next++);
    EXPECT_TRUE(Intact(msg, kSizes[msg.meta.request_id() % 5]));
  }
  EXPECT_EQ(pair.transport(0).SendsByPath()["eager"], index) << PathsTaken(pair.transport(0));
}

TEST(EagerPathTest, PayloadsJustBelowTheThresholdArriveIntact) {
  UcxPair pair(WriterOptions(), ReaderOptions());
  for (int fragments : {1, 3}) {
    pair.transport(0).Send(1, TestMessage(0, fragments, 16383, fragments), nullptr);
  }
  ASSERT_TRUE(pair.inbox(1).WaitFor(2));
  for (const Message& msg : pair.inbox(1).All()) EXPECT_TRUE(Intact(msg, 16383));
  EXPECT_EQ(pair.transport(0).SendsByPath()["eager"], 2) << PathsTaken(pair.transport(0));
}

TEST(EagerPathTest, BytesThatAreNoMessageAreDropped) {
  UcxPair pair(WriterOptions(), ReaderOptions());
  const Message good = TestMessage(0, 7, 100);
  const std::vector<uint8_t> header = EncodeHeader(good);
  const std::vector<uint8_t> payload(good.vals[0].data(), good.vals[0].data() + 100);
  std::vector<uint8_t> bad_magic = header;
  bad_magic[0] ^= 1;
  UcxTransport& sender = pair.transport(0);
  sender.SendRawActiveMessage(1, kEagerMessageId, {}, payload);         // no header
  sender.SendRawActiveMessage(1, kEagerMessageId, bad_magic, payload);  // not Pacer's
  sender.SendRawActiveMessage(1, kEagerMessageId, header, {1, 2, 3});   // less than it declares
  sender.Send(1, good, nullptr);
  ASSERT_TRUE(pair.inbox(1).WaitFor(1));
  const std::vector<Message> all = pair.inbox(1).All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(Intact(all[0], 100));
}

}  // namespace
}  // namespace testing
}  // namespace pacer
