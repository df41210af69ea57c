// RingPath: a writer's payloads to a rank on its host go through its shared-memory ring, copied in
// or, from memory the ring lent, where they lie; a payload the ring cannot take goes the next way;
// locations that are no record of the ring are refused.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ps/transport/ucx/active_message_ids.h"
#include "ps/transport/ucx/shared_memory_ring.h"
#include "ucx_pair.h"

namespace pacer {
namespace testing {
namespace {

// A ring of 4 MiB takes payloads of up to a quarter of it, less its header.
UcxTransport::Options WithRingOf4MiB() {
  UcxTransport::Options options = WriterOptions();
  options.tuning.shm_ring_bytes = 4 << 20;
  return options;
}

TEST(RingPathTest, PayloadsThatFitGoThroughTheRingAndLargerOnesTheNextWay) {
  UcxPair pair(WithRingOf4MiB(), ReaderOptions());
  const size_t kSizes[] = {16384, 512 << 10, 900 << 10, 2 << 20};
  for (int fragments : {1, 3}) {
    for (size_t i = 0; i < 4; ++i) {
      const int64_t index = fragments * 10 + static_cast<int64_t>(i);
      pair.transport(0).Send(1, TestMessage(0, index, kSizes[i], fragments), nullptr);
    }
  }
  ASSERT_TRUE(pair.inbox(1).WaitFor(8));
  for (const Message& msg : pair.inbox(1).All()) {
    EXPECT_TRUE(Intact(msg, kSizes[msg.meta.request_id() % 10]));
  }
  std::map<std::string, int64_t> paths = pair.transport(0).SendsByPath();
  EXPECT_EQ(paths["ring"], 6) << PathsTaken(pair.transport(0));
  EXPECT_EQ(paths["rendezvous"], 2) << PathsTaken(pair.transport(0));
}

TEST(RingPathTest, ValuesInLentMemoryAreReadWhereTheyLie) {
  UcxPair pair(WithRingOf4MiB(), ReaderOptions());
  constexpr size_t kBytes = 256 << 10;
  std::shared_ptr<void> lent = pair.transport(0).LendSharedMemory(kBytes);
  ASSERT_NE(lent, nullptr);
  const Message pattern = TestMessage(0, 5, kBytes);
  std::memcpy(lent.get(), pattern.vals[0].data(), kBytes);
  Message msg = pattern;
  msg.vals = {Buffer(static_cast<uint8_t*>(lent.get()), kBytes)};
  pair.transport(0).Send(1, msg, nullptr);
  ASSERT_TRUE(pair.inbox(1).WaitFor(1));
  const Message received = pair.inbox(1).All()[0];
  EXPECT_TRUE(Intact(received, kBytes));
  EXPECT_TRUE(received.vals[0].lent()) << "copied instead of read in place";
  EXPECT_EQ(pair.transport(0).SendsByPath()["ring"], 1);
}

TEST(RingPathTest, LocationsThatAreNoRecordAreRefused) {
  UcxPair pair(WithRingOf4MiB(), ReaderOptions());
  const Message good = TestMessage(0, 9, 100000);
  const std::vector<uint8_t> header = EncodeHeader(good);
  auto location = [](uint64_t offset, uint64_t length) {
    SharedMemoryLocation where;
    where.offset = offset;
    where.length = length;
    std::vector<uint8_t> bytes(sizeof where);
    std::memcpy(bytes.data(), &where, sizeof where);
    return bytes;
  };
  UcxTransport& sender = pair.transport(0);
  sender.SendRawActiveMessage(1, kRingMessageId, header, {1, 2, 3, 4});  // no location
  sender.SendRawActiveMessage(1, kRingMessageId, header, location(uint64_t{1} << 40, 100000));
  sender.SendRawActiveMessage(1, kRingMessageId, header, location(4096, 99999));  // not declared
  sender.Send(1, good, nullptr);
  ASSERT_TRUE(pair.inbox(1).WaitFor(1));
  const std::vector<Message> all = pair.inbox(1).All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(Intact(all[0], 100000));
}

}  // namespace
}  // namespace testing
}  // namespace pacer
