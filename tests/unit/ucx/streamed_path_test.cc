// StreamedPath: over TCP alone a writer's large payloads go as pieces, which the receiver hands
// to the message's consumer as they come, in order, or copies into place; pieces of no stream,
// or out of place, are dropped, and a header that claims more than ever comes costs no more than
// a bounded buffer (until the stream is given up, after timeout_s).
#include "ps/transport/ucx/streamed_path.h"

#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "ps/transport/ucx/active_message_ids.h"
#include "ucx_pair.h"

namespace pacer {
namespace testing {
namespace {

// Takes a message's values as they arrive, checking that the pieces come in order.
class Collector : public PayloadConsumer {
 public:
  void Consume(uint64_t offset, const uint8_t* bytes, size_t length) override {
    EXPECT_EQ(offset, bytes_.size()) << "a piece out of order";
    bytes_.insert(bytes_.end(), bytes, bytes + length);
    ++pieces_;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  int pieces() const { return pieces_; }

 private:
  std::vector<uint8_t> bytes_;
  int pieces_ = 0;
};

UcxTransport::Options Streaming(double timeout_s = 30) {
  UcxTransport::Options options = WriterOptions(/*tcp=*/true);
  options.tuning.stream_piece_bytes = 65483;  // one loopback segment
  options.timeout_s = timeout_s;
  return options;
}

TEST(StreamedPathTest, PiecesGoToTheConsumerInOrderOrIntoPlace) {
  // Messages of even request ids go to a consumer, the others are received whole.
  auto consumers = [](const Message& msg) -> std::shared_ptr<PayloadConsumer> {
    if (msg.meta.request_id() % 2 == 1) return nullptr;
    return std::make_shared<Collector>();
  };
  UcxPair pair(Streaming(), ReaderOptions(/*tcp=*/true), consumers);
  const size_t kSizes[] = {16384, 1 << 20, (3 << 20) + 8};
  int64_t index = 0;
  for (size_t bytes : kSizes) {
    for (int fragments : {1, 3}) {
      pair.transport(0).Send(1, TestMessage(0, index++, bytes, fragments), nullptr);
    }
  }
  ASSERT_TRUE(pair.inbox(1).WaitFor(index));
  for (const Message& msg : pair.inbox(1).All()) {
    const size_t bytes = kSizes[msg.meta.request_id() / 2];
    if (msg.meta.request_id() % 2 == 1) {
      EXPECT_EQ(msg.consumer, nullptr);
      EXPECT_TRUE(Intact(msg, bytes));
      continue;
    }
    auto* collector = dynamic_cast<Collector*>(msg.consumer.get());
    ASSERT_NE(collector, nullptr) << "message " << msg.meta.request_id();
    EXPECT_EQ(msg.consumed_bytes, bytes);
    Message whole = msg;
    whole.vals = {Buffer::Copy(collector->bytes().data(), collector->bytes().size())};
    EXPECT_TRUE(Intact(whole, bytes));
    if (bytes > (1 << 20)) {
      EXPECT_GT(collector->pieces(), 16);
    }
  }
  EXPECT_EQ(pair.transport(0).SendsByPath()["streamed"], index) << PathsTaken(pair.transport(0));
}

// A stream's header with its first piece, as StreamedPath sends it: the token, then the header.
std::vector<uint8_t> StreamHeader(uint64_t token, const std::vector<uint8_t>& header) {
  std::vector<uint8_t> bytes(sizeof token + header.size());
  std::memcpy(bytes.data(), &token, sizeof token);
  std::memcpy(bytes.data() + sizeof token, header.data(), header.size());
  return bytes;
}

std::vector<uint8_t> PieceHeader(uint64_t token, uint64_t offset, int64_t sender) {
  const StreamedPath::PieceHeader piece{token, offset, sender};
  std::vector<uint8_t> bytes(sizeof piece);
  std::memcpy(bytes.data(), &piece, sizeof piece);
  return bytes;
}

TEST(StreamedPathTest, PiecesOfNoStreamOrOutOfPlaceAreDropped) {
  UcxPair pair(Streaming(), ReaderOptions(/*tcp=*/true));
  UcxTransport& sender = pair.transport(0);
  const Message declared = TestMessage(0, 1, 1000);
  // A piece of a stream that never began.
  sender.SendRawActiveMessage(1, kStreamPieceId, PieceHeader(99, 0, 0), std::vector<uint8_t>(10));
  // A stream of 1000 bytes whose second piece comes at the wrong offset: the whole is dropped.
  sender.SendRawActiveMessage(1, kStreamHeaderId, StreamHeader(7, EncodeHeader(declared)),
                              std::vector<uint8_t>(100));
  sender.SendRawActiveMessage(1, kStreamPieceId, PieceHeader(7, 500, 0), std::vector<uint8_t>(900));
  const Message good = TestMessage(0, 2, 200000);
  sender.Send(1, good, nullptr);
  ASSERT_TRUE(pair.inbox(1).WaitFor(1));
  const std::vector<Message> all = pair.inbox(1).All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(Intact(all[0], 200000));
}

// Without the bound, the receiver would allocate 2^40 bytes for it (and fail).
TEST(StreamedPathTest, AHeaderClaimingTwoToTheFortyBytesDoesNotAllocateThem) {
  UcxPair pair(Streaming(), ReaderOptions(/*tcp=*/true));
  Message huge = TestMessage(0, 1, 100);
  std::vector<uint8_t> header = EncodeHeader(huge);
  WireHeader wire;
  std::memcpy(&wire, header.data(), sizeof wire);
  wire.vals_bytes = uint64_t{1} << 40;
  std::memcpy(header.data(), &wire, sizeof wire);
  pair.transport(0).SendRawActiveMessage(1, kStreamHeaderId, StreamHeader(3, header),
                                         std::vector<uint8_t>(100));
  const Message good = TestMessage(0, 2, 200000);
  pair.transport(0).Send(1, good, nullptr);
  ASSERT_TRUE(pair.inbox(1).WaitFor(1));
  EXPECT_TRUE(Intact(pair.inbox(1).All()[0], 200000));
}

}  // namespace
}  // namespace testing
}  // namespace pacer
