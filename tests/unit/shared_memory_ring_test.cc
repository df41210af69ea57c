#include "ps/transport/ucx/shared_memory_ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pacer/error.h"

namespace pacer {
namespace {

constexpr size_t kRingBytes = 1 << 20;

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + i / 251);
  return v;
}

// The reader maps the ring a second time, through /proc, as a process on the same host does.
Buffer ReadBack(const SharedMemoryPeer& peer, const SharedMemoryLocation& where) {
  Buffer payload;
  std::string error;
  EXPECT_TRUE(peer.Read(where, &payload, &error)) << error;
  return payload;
}

TEST(SharedMemoryRingTest, FragmentsArriveWholeThroughAnotherMapping) {
  SharedMemoryRing ring(kRingBytes);
  SharedMemoryPeer peer(3, ring.info());
  // Unaligned sizes, so each fragment after the first starts off a line.
  const std::vector<uint8_t> a = Pattern(100, 1), b = Pattern(70001, 2), c = Pattern(5003, 3);
  std::vector<Buffer> fragments = {Buffer(a.data(), a.size()), Buffer(b.data(), b.size()),
                                   Buffer(c.data(), c.size())};
  const size_t bytes = a.size() + b.size() + c.size();
  std::optional<SharedMemoryLocation> where = ring.Write(fragments, bytes);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->length, bytes);
  Buffer payload = ReadBack(peer, *where);
  ASSERT_EQ(payload.size(), bytes);
  std::vector<uint8_t> expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  expected.insert(expected.end(), c.begin(), c.end());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), payload.data()));
}

// Memory lent out of the ring is read in place: the reader sees the sender's later writes, its
// letting go frees nothing, and only Return gives the room back.
TEST(SharedMemoryRingTest, LentMemoryIsReadInPlaceUntilReturned) {
  SharedMemoryRing ring(kRingBytes);
  SharedMemoryPeer peer(2, ring.info());
  const size_t lent_bytes = ring.max_payload() * 3;
  uint8_t* lent = ring.Lend(lent_bytes);
  ASSERT_NE(lent, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(lent) % 64, 0u);
  const std::vector<uint8_t> data = Pattern(lent_bytes, 5);
  std::copy(data.begin(), data.end(), lent);

  std::optional<SharedMemoryLocation> where = ring.Locate(lent + 100, 5000);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->length, 5000u);
  EXPECT_EQ(where->lent, 1u);
  Buffer payload = ReadBack(peer, *where);
  EXPECT_TRUE(payload.lent());
  EXPECT_TRUE(payload.Slice(10, 10).lent());
  ASSERT_EQ(payload.size(), 5000u);
  EXPECT_TRUE(std::equal(data.begin() + 100, data.begin() + 5100, payload.data()));
  lent[100] ^= 0xff;  // no copy: the reader sees the write
  EXPECT_EQ(payload.data()[0], static_cast<uint8_t>(data[100] ^ 0xff));
  Buffer owned = payload.Owned();
  EXPECT_FALSE(owned.lent());
  EXPECT_NE(owned.data(), payload.data());
  payload = Buffer();

  EXPECT_FALSE(ring.Locate(lent + lent_bytes - 10, 11)) << "runs past the lent memory";
  EXPECT_FALSE(ring.Locate(data.data(), 10)) << "not the ring's memory";
  // The lent three quarters stay taken after the reader let go: no quarter-ring record fits.
  const std::vector<uint8_t> quarter = Pattern(ring.max_payload(), 6);
  EXPECT_FALSE(ring.Write({Buffer(quarter.data(), quarter.size())}, quarter.size()));
  ring.Return(lent);
  EXPECT_FALSE(ring.Locate(lent + 100, 10)) << "returned";
  std::optional<SharedMemoryLocation> record =
      ring.Write({Buffer(quarter.data(), quarter.size())}, quarter.size());
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->lent, 0u);
  EXPECT_THROW(ring.Return(lent), Error);
}

// Records are freed when the reader lets go of the payload's last copy, and a new record takes the
// lowest offset free, so a steady stream cycles through as few pages as it has bytes in flight.
TEST(SharedMemoryRingTest, ReleasedRecordsAreReusedLowestFirst) {
  SharedMemoryRing ring(kRingBytes);
  SharedMemoryPeer peer(1, ring.info());
  const std::vector<uint8_t> data = Pattern(ring.max_payload(), 9);
  const std::vector<Buffer> one = {Buffer(data.data(), data.size())};
  std::vector<SharedMemoryLocation> written;
  std::vector<Buffer> held;
  while (std::optional<SharedMemoryLocation> where = ring.Write(one, data.size())) {
    written.push_back(*where);
    held.push_back(ReadBack(peer, *where));
  }
  // A quarter of the ring each, each with a header line: three fit, not four.
  ASSERT_EQ(written.size(), 3u);
  EXPECT_LT(written[0].offset, written[1].offset);
  EXPECT_LT(written[1].offset, written[2].offset);

  Buffer copy = held[0];
  held[0] = Buffer();
  EXPECT_FALSE(ring.Write(one, data.size())) << "a copy of the payload still holds its record";
  copy = Buffer();
  std::optional<SharedMemoryLocation> again = ring.Write(one, data.size());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->offset, written[0].offset);

  // A small record goes into the first gap that fits, before the tail.
  held[1] = Buffer();
  const std::vector<uint8_t> small = Pattern(4096, 4);
  std::optional<SharedMemoryLocation> gap = ring.Write({Buffer(small.data(), small.size())}, 4096);
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->offset, written[1].offset);
  Buffer read = ReadBack(peer, *gap);
  EXPECT_TRUE(std::equal(small.begin(), small.end(), read.data()));
}

TEST(SharedMemoryRingTest, PayloadsOverAQuarterOfTheRingAreRefused) {
  SharedMemoryRing ring(kRingBytes);
  const std::vector<uint8_t> data(ring.max_payload() + 1);
  EXPECT_FALSE(ring.Write({Buffer(data.data(), data.size())}, data.size()));
}

TEST(SharedMemoryRingTest, LocationsOutsideTheRingNameTheOffsets) {
  SharedMemoryRing ring(kRingBytes);
  SharedMemoryPeer peer(5, ring.info());
  const struct {
    SharedMemoryLocation where;
    const char* why;
  } cases[] = {
      {{kRingBytes + 64, 16}, "past the end"},
      {{128, kRingBytes}, "longer than the ring"},
      {{130, 16}, "not on a line"},
      {{0, 16}, "over the ring's header"},
      {{kRingBytes + 64, 16, 1}, "lent, past the end"},
      {{8, 16, 1}, "lent, over the ring's header"},
      {{128, 16, 2}, "neither lent nor a record"},
  };
  for (const auto& c : cases) {
    Buffer payload;
    std::string error;
    EXPECT_FALSE(peer.Read(c.where, &payload, &error)) << c.why;
    EXPECT_EQ(error, "rank 5 sent a payload of " + std::to_string(c.where.length) +
                         " bytes at offset " + std::to_string(c.where.offset) + " of its " +
                         std::to_string(kRingBytes) + "-byte shared-memory ring")
        << c.why;
  }
}

TEST(SharedMemoryRingTest, APeerRefusesMemoryThatIsNotTheRingAnnounced) {
  SharedMemoryRing ring(kRingBytes);
  SharedMemoryRingInfo forged = ring.info();
  forged.token ^= 1;
  try {
    SharedMemoryPeer peer(2, forged);
    FAIL() << "mapped a ring with the wrong token";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the token differs"), std::string::npos) << e.what();
  }
  SharedMemoryRingInfo resized = ring.info();
  resized.bytes *= 2;
  EXPECT_THROW(SharedMemoryPeer(2, resized), Error);
  // Announced while the descriptor was open; once it is closed, /proc has nothing to open.
  const SharedMemoryRingInfo announced = ring.info();
  SharedMemoryPeer mapped_before(2, announced);
  ring.CloseDescriptor();
  EXPECT_THROW(SharedMemoryPeer(2, announced), Error) << "the descriptor is closed";
}

TEST(SharedMemoryRingTest, SizesThatAreNoWholePagesAreRefused) {
  EXPECT_THROW(SharedMemoryRing(kRingBytes + 100), Error);
  EXPECT_THROW(SharedMemoryRing(0), Error);
}

}  // namespace
}  // namespace pacer
