#include "ps/transport/ucx/segment_pieces.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <string>
#include <vector>

namespace pacer {
namespace {

constexpr size_t kSegment = kLoopbackSegmentBytes;
constexpr size_t kPieceHeader = 24;

// The pieces of one fragment, the first after a header of `first_header` bytes.
std::vector<size_t> Cut(size_t fragment, size_t first_header, size_t target) {
  std::vector<size_t> lengths;
  for (size_t at = 0; at < fragment;) {
    const size_t header = lengths.empty() ? first_header : kPieceHeader;
    lengths.push_back(NextPieceLength(fragment - at, header, target));
    at += lengths.back();
  }
  return lengths;
}

// With its headers every piece but the last ends less than 8 bytes short of a segment boundary.
TEST(SegmentPiecesTest, PiecesFillWholeSegments) {
  const std::vector<size_t> lengths = Cut(size_t{1} << 20, 90, size_t{256} << 10);
  ASSERT_EQ(lengths.size(), 4u);
  size_t sum = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    sum += lengths[i];
    EXPECT_EQ(lengths[i] % 8, 0u) << "piece " << i;
    if (i + 1 == lengths.size()) break;
    const size_t wire = lengths[i] + (i == 0 ? 90 : kPieceHeader) + kUcxWireHeaderBytes;
    EXPECT_LE(wire, 4 * kSegment) << "piece " << i;
    EXPECT_GT(wire + 8, 4 * kSegment) << "piece " << i;
  }
  EXPECT_EQ(sum, size_t{1} << 20);
  EXPECT_EQ(lengths[1], (4 * kSegment - kPieceHeader - kUcxWireHeaderBytes) & ~size_t{7});
  // The tail: 1 MiB less three pieces, more than a piece but within a segment of one.
  EXPECT_GT(lengths[3], lengths[1]);
  EXPECT_LE(lengths[3], lengths[1] + kSegment);
}

TEST(SegmentPiecesTest, ATailOfMoreThanASegmentGetsAPieceOfItsOwn) {
  const size_t piece = (4 * kSegment - kPieceHeader - kUcxWireHeaderBytes) & ~size_t{7};
  const std::vector<size_t> lengths = Cut(2 * piece + kSegment + 8, kPieceHeader, 262144);
  EXPECT_EQ(lengths, (std::vector<size_t>{piece, piece, kSegment + 8}));
}

TEST(SegmentPiecesTest, AFragmentWithinAPieceGoesWhole) {
  EXPECT_EQ(Cut(300000, 90, 262144).size(), 1u);  // within a segment of one piece
  EXPECT_EQ(Cut(1000, 90, 262144), (std::vector<size_t>{1000}));
}

// Below a segment a target is only rounded down to whole values.
TEST(SegmentPiecesTest, TargetsBelowASegmentRoundToWholeValues) {
  EXPECT_EQ(Cut(100, kPieceHeader, 32), (std::vector<size_t>{32, 32, 32, 4}));
  EXPECT_EQ(Cut(100, kPieceHeader, 30), (std::vector<size_t>{24, 24, 24, 24, 4}));
}

// A target between whole segments gets the segments it fills at least: 2.9 segments' worth
// makes pieces of 2.
TEST(SegmentPiecesTest, TargetsRoundDownToWholeSegments) {
  const size_t two = (2 * kSegment - kPieceHeader - kUcxWireHeaderBytes) & ~size_t{7};
  EXPECT_EQ(NextPieceLength(size_t{1} << 20, kPieceHeader, 2 * kSegment + 60000), two);
  EXPECT_EQ(NextPieceLength(size_t{1} << 20, kPieceHeader, kSegment),
            (kSegment - kPieceHeader - kUcxWireHeaderBytes) & ~size_t{7});
}

// Where the caller leaves the piece to Pacer: one segment under BBR, 4 under any other.
TEST(SegmentPiecesTest, TheDefaultTargetFollowsTheCongestionControl) {
  EXPECT_EQ(StreamPieceTarget("bbr"), kSegment);
  EXPECT_EQ(StreamPieceTarget("cubic"), size_t{256} << 10);
  EXPECT_EQ(StreamPieceTarget(""), kUnpacedPieceTarget);
  // Under BBR a 1 MiB payload goes as pieces that each fill one segment with their headers, the
  // last taking the tail.
  const std::vector<size_t> lengths = Cut(size_t{1} << 20, 90, StreamPieceTarget("bbr"));
  ASSERT_EQ(lengths.size(), 16u);
  const size_t piece = (kSegment - kPieceHeader - kUcxWireHeaderBytes) & ~size_t{7};
  for (size_t i = 1; i + 1 < lengths.size(); ++i) EXPECT_EQ(lengths[i], piece) << "piece " << i;
  EXPECT_LE(lengths.back(), piece + kSegment);
}

// The congestion control is read from the kernel, as a name (this machine's, whatever it is).
TEST(SegmentPiecesTest, TheKernelNamesItsCongestionControl) {
  if (!std::ifstream("/proc/sys/net/ipv4/tcp_congestion_control")) {
    GTEST_SKIP() << "this kernel does not say";
  }
  const std::string name = KernelTcpCongestionControl();
  ASSERT_FALSE(name.empty());
  for (char c : name) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_') << name;
}

}  // namespace
}  // namespace pacer
