// DescribedPath: a reader's large payloads to a rank on its host that can read its memory go as
// descriptions, copied out by the receiver, and each send completes once the receiver hands the
// payload back; descriptions and releases that do not fit are refused, and a description whose
// message is malformed is handed back all the same.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ps/transport/ucx/active_message_ids.h"
#include "ucx_pair.h"

namespace pacer {
namespace testing {
namespace {

TEST(DescribedPathTest, PayloadsAreCopiedOutAndEverySendCompletes) {
  UcxPair pair(ReaderOptions(), WriterOptions());
  const size_t kSizes[] = {16384, 1 << 20, size_t{5} << 20};
  Completions sent;
  int64_t index = 0;
  for (int fragments : {1, 3}) {
    for (size_t bytes : kSizes) {
      pair.transport(0).Send(1, TestMessage(0, index++, bytes, fragments), sent.Callback());
    }
  }
  ASSERT_TRUE(pair.inbox(1).WaitFor(index));
  for (const Message& msg : pair.inbox(1).All()) {
    EXPECT_TRUE(Intact(msg, kSizes[msg.meta.request_id() % 3]));
  }
  EXPECT_TRUE(sent.WaitFor(index)) << sent.done() << " of " << index << " released";
  EXPECT_EQ(sent.errors(), std::vector<std::string>());
  EXPECT_EQ(pair.transport(0).SendsByPath()["described"], index) << PathsTaken(pair.transport(0));
}

TEST(DescribedPathTest, DescriptionsAndReleasesThatDoNotFitAreRefused) {
  UcxPair pair(ReaderOptions(), WriterOptions());
  const Message good = TestMessage(0, 4, 100000);
  const std::vector<uint8_t> header = EncodeHeader(good);
  auto words = [](std::vector<uint64_t> w) {
    std::vector<uint8_t> bytes(w.size() * 8);
    std::memcpy(bytes.data(), w.data(), bytes.size());
    return bytes;
  };
  UcxTransport& sender = pair.transport(0);
  sender.SendRawActiveMessage(1, kDescribedMessageId, header, {1, 2, 3});  // too short
  // A description of rank 0's memory of another length than the header declares.
  sender.SendRawActiveMessage(1, kDescribedMessageId, header, words({77, 0, 4096, 100}));
  // Releases of a payload that awaits none, and of one that does not come whole.
  pair.transport(1).SendRawActiveMessage(0, kReleaseMessageId, words({12345, 1}), {});
  pair.transport(1).SendRawActiveMessage(0, kReleaseMessageId, {1, 2, 3}, {});
  Completions sent;
  sender.Send(1, good, sent.Callback());
  ASSERT_TRUE(pair.inbox(1).WaitFor(1));
  const std::vector<Message> all = pair.inbox(1).All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(Intact(all[0], 100000));
  EXPECT_TRUE(sent.WaitFor(1)) << "the good payload was not released";
}

TEST(DescribedPathTest, AMalformedMessageIsStillHandedBack) {
  UcxPair pair(ReaderOptions(), WriterOptions());
  Message bad = TestMessage(0, 2, 100000);
  std::vector<uint8_t> header = EncodeHeader(bad);
  header[0] ^= 1;  // no Pacer header: its sender cannot be told from it
  Completions sent;
  pair.transport(0).SendBytes(1, header, PayloadFragments(bad), sent.Callback());
  EXPECT_TRUE(sent.WaitFor(1)) << "the send waits for a release that never comes";
  EXPECT_EQ(pair.inbox(1).All().size(), 0u);
}

}  // namespace
}  // namespace testing
}  // namespace pacer
