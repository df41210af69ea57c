// Records that carry key state between servers: counted, then written into memory of that size;
// read back with every length checked.
#include "common/byte_stream.h"

#include <gtest/gtest.h>

#include <vector>

namespace pacer {
namespace {

void WriteRecord(ByteWriter& out) {
  out.Put(int64_t{42});
  const std::vector<float> values = {1.5f, -2.f, 3.25f};
  out.PutArray(values);
  out.PutArray(static_cast<const float*>(nullptr), 0);
}

TEST(ByteStreamTest, ACountedRecordIsWrittenAndReadBack) {
  ByteWriter count;
  WriteRecord(count);
  EXPECT_EQ(count.size(), 8u + 8u + 3 * 4u + 8u);
  std::vector<uint8_t> memory(count.size());
  ByteWriter out(memory.data(), memory.size());
  WriteRecord(out);
  EXPECT_EQ(out.size(), count.size());

  ByteReader in(memory.data(), memory.size(), "the record");
  EXPECT_EQ(in.Get<int64_t>(), 42);
  EXPECT_EQ(in.GetArray<float>(), (std::vector<float>{1.5f, -2.f, 3.25f}));
  size_t n = 1;
  in.GetArrayBytes<float>(&n);
  EXPECT_EQ(n, 0u);
  EXPECT_TRUE(in.done());
}

TEST(ByteStreamTest, OverrunsAreErrorsNamingTheRecord) {
  std::vector<uint8_t> memory(12);
  ByteWriter out(memory.data(), memory.size());
  out.Put(int64_t{1});
  EXPECT_THROW(out.Put(int64_t{2}), Error);

  ByteWriter count;
  count.PutArray(std::vector<float>(1000));
  std::vector<uint8_t> record(count.size());
  ByteWriter full(record.data(), record.size());
  full.PutArray(std::vector<float>(1000));
  ByteReader truncated(record.data(), 100, "key 7's state");
  try {
    truncated.GetArray<float>();
    ADD_FAILURE() << "a truncated array was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "key 7's state: an array of 1000 elements of 4 bytes, but only 92 bytes are left");
  }
}

}  // namespace
}  // namespace pacer
