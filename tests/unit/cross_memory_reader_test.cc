// CrossMemoryReader: a copy split over threads lands exactly, however its pieces fall across the
// ranges, and unreadable memory is reported, not copied.
#include "ps/transport/ucx/cross_memory_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pacer {
namespace {

class CrossMemoryReaderTest : public ::testing::TestWithParam<int> {};

// Ranges of odd lengths (one empty) whose total crosses kMinSplitBytes, read from this process
// (the kernel treats it like any other).
TEST_P(CrossMemoryReaderTest, CopiesEveryRangeInOrder) {
  const std::vector<size_t> lengths = {3, 300007, 0, 4096, 777777, 1};
  std::vector<std::vector<uint8_t>> sources;
  std::vector<RemoteRange> ranges;
  std::vector<uint8_t> expected;
  for (size_t r = 0; r < lengths.size(); ++r) {
    sources.emplace_back(lengths[r]);
    for (size_t i = 0; i < lengths[r]; ++i) {
      sources[r][i] = static_cast<uint8_t>(i * 31 + r * 7 + i / 4099);
    }
    ranges.push_back({reinterpret_cast<uint64_t>(sources[r].data()), lengths[r]});
    expected.insert(expected.end(), sources[r].begin(), sources[r].end());
  }
  ASSERT_GE(expected.size(), CrossMemoryReader::kMinSplitBytes);
  CrossMemoryReader reader(GetParam());
  for (int round = 0; round < 3; ++round) {  // helpers serve one read after another
    std::vector<uint8_t> out(expected.size() + 1, 0xEE);
    std::string error;
    ASSERT_TRUE(reader.Read(getpid(), ranges, out.data(), &error)) << error;
    EXPECT_EQ(out.back(), 0xEE) << "wrote past the end";
    out.pop_back();
    EXPECT_TRUE(out == expected) << "round " << round;
  }
}

TEST_P(CrossMemoryReaderTest, ReportsMemoryItCannotRead) {
  std::vector<uint8_t> source(1 << 20, 1);
  // The second half of the read starts in unmapped memory (the first page never is mapped).
  std::vector<RemoteRange> ranges = {{reinterpret_cast<uint64_t>(source.data()), source.size()},
                                     {4096, 1 << 20}};
  std::vector<uint8_t> out(2 << 20);
  CrossMemoryReader reader(GetParam());
  std::string error;
  EXPECT_FALSE(reader.Read(getpid(), ranges, out.data(), &error));
  EXPECT_NE(error.find("of process " + std::to_string(getpid()) + " at 0x1000: Bad address"),
            std::string::npos)
      << error;
}

INSTANTIATE_TEST_SUITE_P(Threads, CrossMemoryReaderTest, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace pacer
