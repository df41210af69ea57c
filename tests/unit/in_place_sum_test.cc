// InPlaceSum: a push's pieces summed into the stored values of its keys as they arrive.
#include "server/in_place_sum.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "pacer/error.h"
#include "pacer/reducer.h"

namespace pacer {
namespace detail {
namespace {

// Keys of 1000, 3 and 700 values; pieces of `piece` bytes cross the keys' ends.
class InPlaceSumTest : public ::testing::TestWithParam<size_t> {};

TEST_P(InPlaceSumTest, SumsEveryPieceIntoItsKey) {
  const std::vector<size_t> lengths = {1000, 3, 700};
  std::vector<std::vector<float>> stored;
  std::vector<float*> targets;
  std::vector<uint64_t> offsets = {0};
  for (size_t len : lengths) {
    stored.emplace_back(len);
    std::iota(stored.back().begin(), stored.back().end(), 0.f);
    targets.push_back(stored.back().data());
    offsets.push_back(offsets.back() + len * sizeof(float));
  }
  std::vector<float> pushed(offsets.back() / sizeof(float));
  for (size_t j = 0; j < pushed.size(); ++j) pushed[j] = float(1000 * (j % 3) + 1);
  auto reducer = MakeCpuReducer(1);
  int released = 0;
  {
    InPlaceSum sum(*reducer, targets, offsets, [&] { ++released; });
    const auto* bytes = reinterpret_cast<const uint8_t*>(pushed.data());
    for (uint64_t at = 0; at < offsets.back(); at += GetParam()) {
      sum.Consume(at, bytes + at, std::min<uint64_t>(GetParam(), offsets.back() - at));
    }
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1) << "the shard is released when the sum goes";
  size_t j = 0;
  for (size_t k = 0; k < lengths.size(); ++k) {
    for (size_t i = 0; i < lengths[k]; ++i, ++j) {
      ASSERT_EQ(stored[k][i], float(i) + pushed[j]) << "key " << k << " value " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PieceBytes, InPlaceSumTest, ::testing::Values(4, 12, 4096, 6812, 1 << 20));

TEST(InPlaceSumTest, RejectsPiecesThatAreNotWholeValues) {
  std::vector<float> stored(16, 0.f);
  auto reducer = MakeCpuReducer(1);
  InPlaceSum sum(*reducer, {stored.data()}, {0, 64}, [] {});
  const std::vector<uint8_t> piece(64, 0);
  EXPECT_THROW(sum.Consume(2, piece.data(), 8), Error);
  EXPECT_THROW(sum.Consume(0, piece.data(), 6), Error);
  EXPECT_THROW(sum.Consume(60, piece.data(), 8), Error) << "past the push";
  sum.Consume(0, piece.data(), 64);
}

}  // namespace
}  // namespace detail
}  // namespace pacer
