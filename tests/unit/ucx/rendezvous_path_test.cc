// RendezvousPath: without shared-memory paths, large payloads go by UCX's rendezvous, whole or
// joined from a gather list, and land intact; its messages with what is no header, or a payload
// other than the header declares, are dropped.
#include <gtest/gtest.h>

#include <vector>

#include "ps/transport/ucx/active_message_ids.h"
#include "ucx_pair.h"

namespace pacer {
namespace testing {
namespace {

UcxTransport::Options WithoutSharedMemoryPaths(UcxTransport::Options options) {
  options.tuning.shm_ring_bytes = 0;
  options.tuning.read_threads = 0;
  return options;
}

TEST(RendezvousPathTest, LargePayloadsArriveIntactWholeAndJoined) {
  UcxPair pair(WithoutSharedMemoryPaths(WriterOptions()),
               WithoutSharedMemoryPaths(ReaderOptions()));
  const size_t kSizes[] = {16384, (1 << 20) + 3, size_t{8} << 20};
  for (int from : {0, 1}) {
    int64_t index = 0;
    for (int fragments : {1, 3}) {
      for (size_t bytes : kSizes) {
        pair.transport(from).Send(1 - from, TestMessage(from, index++, bytes, fragments), nullptr);
      }
    }
    ASSERT_TRUE(pair.inbox(1 - from).WaitFor(index));
    for (const Message& msg : pair.inbox(1 - from).All()) {
      EXPECT_TRUE(Intact(msg, kSizes[msg.meta.request_id() % 3]));
    }
    EXPECT_EQ(pair.transport(from).SendsByPath()["rendezvous"], index)
        << PathsTaken(pair.transport(from));
  }
}

TEST(RendezvousPathTest, MalformedMessagesAreDropped) {
  UcxPair pair(WithoutSharedMemoryPaths(WriterOptions()),
               WithoutSharedMemoryPaths(ReaderOptions()));
  const Message good = TestMessage(0, 3, 1 << 20);
  std::vector<uint8_t> header = EncodeHeader(good);
  UcxTransport& sender = pair.transport(0);
  sender.SendRawActiveMessage(1, kRendezvousMessageId, {0, 1, 2}, std::vector<uint8_t>(64));
  sender.SendRawActiveMessage(1, kRendezvousMessageId, header, std::vector<uint8_t>(64));
  sender.Send(1, good, nullptr);
  ASSERT_TRUE(pair.inbox(1).WaitFor(1));
  const std::vector<Message> all = pair.inbox(1).All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(Intact(all[0], 1 << 20));
}

}  // namespace
}  // namespace testing
}  // namespace pacer
