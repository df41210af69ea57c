#include "ps/messages/message.h"

#include <gtest/gtest.h>

#include <cstring>

namespace pacer {
namespace {

Message SampleMessage() {
  Message msg;
  msg.meta.set_command(proto::PUSH);
  msg.meta.set_sender(2);
  msg.meta.set_app_id(1);
  msg.meta.set_client_id(3);
  msg.meta.set_request_id(42);
  msg.meta.set_value_size(4);
  std::vector<uint64_t> keys = {3, 7, 11};
  std::vector<int32_t> lens = {1, 2, 3};
  msg.keys = Buffer::FromVector(std::move(keys));
  msg.lens = Buffer::FromVector(std::move(lens));
  std::vector<float> a = {1, 2}, b = {3, 4, 5, 6};
  msg.vals = {Buffer::FromVector(std::move(a)), Buffer::FromVector(std::move(b))};
  return msg;
}

// 200 keys with lengths: 2400 bytes of index, too many for the header, so they go in the payload.
Message LargeIndexMessage() {
  Message msg = SampleMessage();
  std::vector<uint64_t> keys(200);
  std::vector<int32_t> lens(200, 0);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = 2 * i;
  lens[0] = 1;
  lens[199] = 5;
  msg.keys = Buffer::FromVector(std::move(keys));
  msg.lens = Buffer::FromVector(std::move(lens));
  return msg;
}

Buffer Join(const std::vector<Buffer>& fragments) {
  std::vector<uint8_t> out;
  for (const Buffer& f : fragments) out.insert(out.end(), f.data(), f.data() + f.size());
  return Buffer::FromVector(std::move(out));
}

// Decodes header and payload; returns the error, empty on success.
std::string Decode(const std::vector<uint8_t>& header, const Buffer& payload, Message* out,
                   int world = 4) {
  DecodedHeader decoded;
  std::string error;
  if (!DecodeHeader(header.data(), header.size(), world, &decoded, &error)) return error;
  if (!DecodePayload(std::move(decoded), payload, out, &error)) return error;
  return "";
}

TEST(MessageTest, RoundTripKeepsMetaAndSegments) {
  Message msg = SampleMessage();
  Message out;
  ASSERT_EQ(Decode(EncodeHeader(msg), Join(PayloadFragments(msg)), &out), "");
  EXPECT_EQ(out.meta.command(), proto::PUSH);
  EXPECT_EQ(out.meta.sender(), 2);
  EXPECT_EQ(out.meta.request_id(), 42);
  EXPECT_EQ(out.meta.client_id(), 3);
  ASSERT_EQ(out.num_keys(), 3u);
  EXPECT_EQ(out.keys.as<uint64_t>()[2], 11u);
  EXPECT_EQ(out.lens.as<int32_t>()[1], 2);
  ASSERT_EQ(out.vals.size(), 1u);
  ASSERT_EQ(out.vals_bytes(), 6 * sizeof(float));
  const float* v = out.vals[0].as<float>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[i], i + 1);
}

TEST(MessageTest, SmallIndexRidesInTheHeaderAndValuesAloneInThePayload) {
  Message msg = SampleMessage();
  std::vector<Buffer> payload = PayloadFragments(msg);
  ASSERT_EQ(payload.size(), 2u);  // the two value fragments, nothing else
  EXPECT_EQ(payload[0].data(), msg.vals[0].data());
  EXPECT_EQ(EncodeHeader(msg).size(), sizeof(WireHeader) + msg.meta.ByteSizeLong() + 3 * 8 + 3 * 4);
}

TEST(MessageTest, LargeIndexRoundTripsThroughThePayload) {
  Message msg = LargeIndexMessage();
  Buffer payload = Join(PayloadFragments(msg));
  EXPECT_EQ(payload.size(), 200u * 8 + 200 * 4 + 24);  // no padding: 2400 is a multiple of 8
  Message out;
  ASSERT_EQ(Decode(EncodeHeader(msg), payload, &out), "");
  ASSERT_EQ(out.num_keys(), 200u);
  EXPECT_EQ(out.keys.as<uint64_t>()[199], 398u);
  EXPECT_EQ(out.lens.as<int32_t>()[199], 5);
  ASSERT_EQ(out.vals_bytes(), 24u);
  EXPECT_EQ(out.vals[0].as<float>()[5], 6.0f);
  EXPECT_EQ((out.vals[0].data() - payload.data()) % 8, 0);  // values 8-byte aligned
}

TEST(MessageTest, ValuesAfterAnOddIndexArePadded) {
  Message msg = LargeIndexMessage();
  std::vector<uint64_t> keys(201);
  std::vector<int32_t> lens(201, 0);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  lens[200] = 6;
  msg.keys = Buffer::FromVector(std::move(keys));
  msg.lens = Buffer::FromVector(std::move(lens));
  Buffer payload = Join(PayloadFragments(msg));
  EXPECT_EQ(payload.size(), 201u * 8 + 201 * 4 + 4 + 24);  // 2412 bytes of index, 4 of padding
  Message out;
  ASSERT_EQ(Decode(EncodeHeader(msg), payload, &out), "");
  EXPECT_EQ((out.vals[0].data() - payload.data()) % 8, 0);
  EXPECT_EQ(out.vals[0].as<float>()[0], 1.0f);
}

TEST(MessageTest, IndexWithoutValuesHasNoPadding) {
  Message msg = LargeIndexMessage();
  msg.vals.clear();
  std::vector<uint64_t> keys(201);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  msg.keys = Buffer::FromVector(std::move(keys));
  msg.lens = Buffer();
  Message out;
  ASSERT_EQ(Decode(EncodeHeader(msg), Join(PayloadFragments(msg)), &out), "");
  EXPECT_EQ(out.num_keys(), 201u);
}

TEST(MessageTest, EmptyPayloadRoundTrips) {
  Message msg;
  msg.meta.set_command(proto::BARRIER);
  msg.meta.set_sender(0);
  Message out;
  ASSERT_EQ(Decode(EncodeHeader(msg), Buffer(), &out), "");
  EXPECT_EQ(out.num_keys(), 0u);
  EXPECT_TRUE(out.vals.empty());
}

TEST(MessageTest, RejectsTruncatedHeader) {
  std::vector<uint8_t> header = EncodeHeader(SampleMessage());
  header.resize(10);
  Message out;
  EXPECT_NE(Decode(header, Buffer(), &out).find("truncated header: 10 bytes"), std::string::npos);
}

TEST(MessageTest, RejectsBadMagic) {
  std::vector<uint8_t> header = EncodeHeader(SampleMessage());
  header[0] ^= 0xff;
  Message out;
  EXPECT_NE(Decode(header, Buffer(), &out).find("bad magic"), std::string::npos);
}

TEST(MessageTest, RejectsMetaLengthMismatch) {
  std::vector<uint8_t> header = EncodeHeader(SampleMessage());
  header.push_back(0);
  Message out;
  EXPECT_NE(Decode(header, Buffer(), &out).find("declares"), std::string::npos);
}

TEST(MessageTest, RejectsGarbageMeta) {
  Message msg = SampleMessage();
  std::vector<uint8_t> header = EncodeHeader(msg);
  for (size_t i = sizeof(WireHeader); i < header.size(); ++i) header[i] = 0xff;
  Message out;
  EXPECT_NE(Decode(header, Buffer(), &out).find("unparsable meta"), std::string::npos);
}

TEST(MessageTest, RejectsSenderOutsideWorld) {
  Message msg = SampleMessage();
  msg.meta.set_sender(9);
  Message out;
  std::string error = Decode(EncodeHeader(msg), Join(PayloadFragments(msg)), &out, 4);
  EXPECT_NE(error.find("rank 9"), std::string::npos) << error;
  EXPECT_NE(error.find("outside [0, 4)"), std::string::npos) << error;
}

TEST(MessageTest, RejectsUnknownCommand) {
  Message msg = SampleMessage();
  msg.meta.set_command(static_cast<proto::Command>(77));
  Message out;
  EXPECT_NE(Decode(EncodeHeader(msg), Join(PayloadFragments(msg)), &out).find("unknown command 77"),
            std::string::npos);
}

// Rewrites one field of the fixed header.
std::vector<uint8_t> WithWire(const Message& msg, void (*edit)(WireHeader*)) {
  std::vector<uint8_t> header = EncodeHeader(msg);
  WireHeader w;
  std::memcpy(&w, header.data(), sizeof(w));
  edit(&w);
  std::memcpy(header.data(), &w, sizeof(w));
  return header;
}

TEST(MessageTest, RejectsPartialKey) {
  Message msg = LargeIndexMessage();
  auto header = WithWire(msg, [](WireHeader* w) { w->keys_bytes = 12; });
  Message out;
  EXPECT_NE(Decode(header, Buffer(), &out).find("keys segment of 12 bytes"), std::string::npos);
}

TEST(MessageTest, RejectsLengthsCountMismatch) {
  Message msg = LargeIndexMessage();
  auto header = WithWire(msg, [](WireHeader* w) { w->lens_bytes = 8; });
  Message out;
  EXPECT_NE(Decode(header, Buffer(), &out).find("2 lengths for 200 keys"), std::string::npos);
}

TEST(MessageTest, RejectsIndexSizesThatDisagreeWithTheHeader) {
  Message msg = SampleMessage();
  auto header = WithWire(msg, [](WireHeader* w) { w->keys_bytes = 16; });
  Message out;
  EXPECT_NE(Decode(header, Buffer(), &out).find("bytes of keys and lengths"), std::string::npos);
}

TEST(MessageTest, RejectsValuesNotMultipleOfValueSize) {
  Message msg = SampleMessage();
  auto header = WithWire(msg, [](WireHeader* w) { w->vals_bytes = 23; });
  Message out;
  EXPECT_NE(Decode(header, Buffer(), &out).find("not a multiple of value size 4"),
            std::string::npos);
}

TEST(MessageTest, RejectsTruncatedPayload) {
  Message msg = SampleMessage();
  Buffer payload = Join(PayloadFragments(msg));
  Message out;
  std::string error = Decode(EncodeHeader(msg), payload.Slice(0, payload.size() - 4), &out);
  EXPECT_NE(error.find("payload of 20 bytes, header declares 24"), std::string::npos) << error;
}

TEST(MessageTest, RejectsLengthsThatDisagreeWithValues) {
  Message msg = SampleMessage();
  std::vector<int32_t> lens = {1, 2, 2};  // 5 values declared, 6 sent
  msg.lens = Buffer::FromVector(std::move(lens));
  Message out;
  std::string error = Decode(EncodeHeader(msg), Join(PayloadFragments(msg)), &out);
  EXPECT_NE(error.find("lengths add up to 20 bytes of values, payload carries 24"),
            std::string::npos)
      << error;
}

TEST(MessageTest, RejectsNegativeLength) {
  Message msg = SampleMessage();
  std::vector<int32_t> lens = {-1, 4, 3};
  msg.lens = Buffer::FromVector(std::move(lens));
  Message out;
  std::string error = Decode(EncodeHeader(msg), Join(PayloadFragments(msg)), &out);
  EXPECT_NE(error.find("negative length -1 for key 3"), std::string::npos) << error;
}

}  // namespace
}  // namespace pacer
