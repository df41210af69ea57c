#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "../common/error_of.h"
#include "pacer/error.h"
#include "ps/routing/router.h"

namespace pacer {
namespace {

TEST(RoutingTest, SpreadIsABijection) {
  // Multiplication by an odd constant is invertible modulo 2^64.
  const uint64_t inverse = [] {
    uint64_t a = 0x9E3779B97F4A7C15ULL, x = a;
    for (int i = 0; i < 6; ++i) x *= 2 - a * x;  // Newton's iteration for the inverse
    return x;
  }();
  for (uint64_t k : {uint64_t{0}, uint64_t{1}, uint64_t{12345}, ~uint64_t{0}, uint64_t{1} << 63}) {
    EXPECT_EQ(Router::Spread(k) * inverse, k);
  }
}

TEST(RoutingTest, RangesCoverTheKeySpaceInOrder) {
  Router router(3, 2);
  ASSERT_EQ(router.num_ranges(), 6);
  EXPECT_EQ(router.epoch(), 0);
  EXPECT_EQ(router.ranges()[0].begin, 0u);
  for (int i = 1; i < 6; ++i) {
    EXPECT_GT(router.ranges()[i].begin, router.ranges()[i - 1].begin);
  }
  // Server s starts with the s-th block of ranges: one contiguous share each.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(router.ranges()[i].server, i / 2) << "range " << i;
  // The last range ends at UINT64_MAX; the widths are equal to within one.
  std::vector<uint64_t> widths;
  for (int i = 0; i < 6; ++i) {
    const uint64_t end = i + 1 < 6 ? router.ranges()[i + 1].begin : 0;  // 2^64 wraps to 0
    widths.push_back(end - router.ranges()[i].begin);
  }
  for (uint64_t w : widths) EXPECT_LE(std::max(w, widths[0]) - std::min(w, widths[0]), 1u);
}

// Keys on and next to every range's bounds land in the range whose bounds hold them.
TEST(RoutingTest, RangeOfAgreesWithTheBounds) {
  const uint64_t inverse = [] {
    uint64_t a = 0x9E3779B97F4A7C15ULL, x = a;
    for (int i = 0; i < 6; ++i) x *= 2 - a * x;
    return x;
  }();
  for (int servers : {1, 3, 7}) {
    Router router(servers, 5);
    const auto& r = router.ranges();
    for (int i = 0; i < router.num_ranges(); ++i) {
      for (int64_t delta : {-1, 0, 1}) {
        const uint64_t spread = r[i].begin + static_cast<uint64_t>(delta);
        int expected = 0;
        while (expected + 1 < router.num_ranges() && r[expected + 1].begin <= spread) ++expected;
        EXPECT_EQ(router.RangeOf(spread * inverse), expected) << "spread " << spread;
      }
    }
  }
}

TEST(RoutingTest, MovesBumpTheEpochAndKeepOneOwnerPerKey) {
  Router router(2, 4);
  const Key key = 12345;
  const int range = router.RangeOf(key);
  const int other = 1 - router.ServerOf(key);
  router.Move(range, other);
  EXPECT_EQ(router.epoch(), 1);
  EXPECT_EQ(router.ServerOf(key), other);
  EXPECT_EQ(router.RangeOf(key), range);  // bounds never change
  // Every other range kept its owner.
  Router initial(2, 4);
  for (int i = 0; i < router.num_ranges(); ++i) {
    if (i != range) {
      EXPECT_EQ(router.ranges()[i].server, initial.ranges()[i].server);
    }
  }
}

TEST(RoutingTest, TablesTravelAsBytes) {
  Router router(3, 4);
  router.Move(5, 2);
  router.Move(11, 0);
  const Router copy = Router::Decode(router.Encode(), 3);
  EXPECT_EQ(copy.epoch(), 2);
  ASSERT_EQ(copy.num_ranges(), router.num_ranges());
  for (int i = 0; i < copy.num_ranges(); ++i) {
    EXPECT_EQ(copy.ranges()[i].begin, router.ranges()[i].begin);
    EXPECT_EQ(copy.ranges()[i].server, router.ranges()[i].server);
  }
}

TEST(RoutingTest, BadMovesAndTablesGetClearErrors) {
  Router router(2, 4);
  EXPECT_EQ(testing::ErrorOf([&] { router.Move(8, 0); }),
            "range 8 does not exist: the table has ranges 0..7");
  EXPECT_EQ(testing::ErrorOf([&] { router.Move(0, 2); }),
            "server 2 does not exist: the job has servers 0..1");
  EXPECT_EQ(router.epoch(), 0);
  std::string bytes = router.Encode();
  EXPECT_EQ(testing::ErrorOf([&] { Router::Decode(bytes.substr(0, 10), 2); }),
            "a routing table of 10 bytes announcing 0 ranges is not a table of 2 servers");
  EXPECT_EQ(testing::ErrorOf([&] { Router::Decode(bytes, 3); }),
            "a routing table of 44 bytes announcing 8 ranges is not a table of 3 servers");
  bytes[bytes.size() - 4] = 9;  // the last range's owner
  EXPECT_EQ(testing::ErrorOf([&] { Router::Decode(bytes, 2); }),
            "a routing table gives range 7 to server 9 of 2");
}

TEST(RoutingTest, EveryKeyHasOneServerInRange) {
  for (int servers : {1, 2, 5}) {
    Router router(servers);
    for (Key k : {Key{0}, Key{1}, Key{1} << 63, ~Key{0}}) {
      int s = router.ServerOf(k);
      EXPECT_GE(s, 0);
      EXPECT_LT(s, servers);
    }
  }
}

struct Balance {
  int servers;
  double tensor_tolerance;  // largest deviation of a server's byte share from 1/servers, relative
};

class RoutingBalanceTest : public ::testing::TestWithParam<Balance> {};

// Small consecutive keys (one key per tensor, as ps-lite users number them) divide evenly.
TEST_P(RoutingBalanceTest, ConsecutiveSmallKeysSpreadEvenly) {
  const int servers = GetParam().servers;
  Router router(servers);
  const int n = 10000;
  std::vector<int> count(servers, 0);
  for (Key k = 0; k < static_cast<Key>(n); ++k) ++count[router.ServerOf(k)];
  for (int s = 0; s < servers; ++s) {
    EXPECT_NEAR(count[s], n / servers, 3) << "server " << s;
  }
  // Even the first few keys do not pile onto one server.
  std::set<int> first;
  for (Key k = 0; k < static_cast<Key>(4 * servers); ++k) first.insert(router.ServerOf(k));
  EXPECT_EQ(static_cast<int>(first.size()), servers);
}

// The weight and batch-norm tensors of ResNet-50 (about 25.5M floats), from 256 B to 9.4 MB.
std::vector<size_t> ResNet50TensorBytes() {
  std::vector<size_t> floats = {64 * 3 * 7 * 7, 64, 64};
  const int blocks[] = {3, 4, 6, 3};
  int in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    int width = 64 << stage, out = width * 4;
    for (int b = 0; b < blocks[stage]; ++b) {
      floats.insert(floats.end(),
                    {size_t(width) * in, size_t(width), size_t(width), size_t(width) * width * 9,
                     size_t(width), size_t(width), size_t(out) * width, size_t(out), size_t(out)});
      if (b == 0) floats.insert(floats.end(), {size_t(out) * in, size_t(out), size_t(out)});
      in = out;
    }
  }
  floats.insert(floats.end(), {size_t(1000) * 2048, 1000});
  std::vector<size_t> bytes;
  for (size_t f : floats) bytes.push_back(f * 4);
  return bytes;
}

TEST_P(RoutingBalanceTest, TensorsOfVeryDifferentSizesLandEvenly) {
  const int servers = GetParam().servers;
  Router router(servers);
  // Large tensors are split into chunks of at most 512 KiB, each its own key (tensor t, chunk c:
  // key t * 65536 + c); placement then balances bytes, not just keys.
  const size_t chunk = 512 << 10;
  std::vector<size_t> load(servers, 0);
  std::vector<size_t> tensors = ResNet50TensorBytes();
  ASSERT_EQ(tensors.size(), 161u);
  for (size_t t = 0; t < tensors.size(); ++t) {
    for (size_t c = 0, offset = 0; offset < tensors[t]; ++c, offset += chunk) {
      load[router.ServerOf(t * 65536 + c)] += std::min(chunk, tensors[t] - offset);
    }
  }
  size_t total = std::accumulate(load.begin(), load.end(), size_t{0});
  EXPECT_EQ(total, 25557032u * 4);
  for (int s = 0; s < servers; ++s) {
    EXPECT_NEAR(double(load[s]) * servers / total, 1.0, GetParam().tensor_tolerance)
        << "server " << s;
  }
}

// The tolerances grow with the servers: the chunk is 1/200 of the model, 8 servers get 25 chunks
// each, so there a few chunks of difference show.
INSTANTIATE_TEST_SUITE_P(Servers, RoutingBalanceTest,
                         ::testing::Values(Balance{2, 0.03}, Balance{3, 0.06}, Balance{4, 0.06},
                                           Balance{8, 0.15}),
                         [](const ::testing::TestParamInfo<Balance>& info) {
                           return std::to_string(info.param.servers) + "servers";
                         });

TEST(RoutingTest, SliceGroupsPositionsByServerInOrder) {
  Router router(3);
  std::vector<Key> keys(50);
  std::iota(keys.begin(), keys.end(), 100);
  auto slices = router.Slice(keys.data(), keys.size());
  ASSERT_EQ(slices.size(), 3u);
  size_t total = 0;
  for (int s = 0; s < 3; ++s) {
    EXPECT_TRUE(std::is_sorted(slices[s].begin(), slices[s].end()));
    for (size_t i : slices[s]) EXPECT_EQ(router.ServerOf(keys[i]), s);
    total += slices[s].size();
  }
  EXPECT_EQ(total, keys.size());
}

}  // namespace
}  // namespace pacer
