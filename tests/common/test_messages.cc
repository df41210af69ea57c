#include "test_messages.h"

#include <utility>

#include "pacer/types.h"

namespace pacer {
namespace testing {

uint8_t PatternByte(int sender, int64_t index, size_t i) {
  return static_cast<uint8_t>(sender * 131 + index * 17 + i * 7 + (i >> 9));
}

Message TestMessage(int sender, int64_t index, size_t bytes, int fragments, int keys) {
  Message msg;
  msg.meta.set_command(proto::PUSH);
  msg.meta.set_sender(sender);
  msg.meta.set_request_id(index);
  msg.meta.set_value_size(1);
  std::vector<Key> key_list(keys);
  for (int k = 0; k < keys; ++k) key_list[k] = static_cast<Key>(index) * 1000 + k;
  msg.keys = Buffer::FromVector(std::move(key_list));
  std::vector<uint8_t> values(bytes);
  for (size_t i = 0; i < bytes; ++i) values[i] = PatternByte(sender, index, i);
  const Buffer whole = Buffer::FromVector(std::move(values));
  for (int f = 0; f < fragments; ++f) {
    const size_t begin = bytes * f / fragments, end = bytes * (f + 1) / fragments;
    msg.vals.push_back(whole.Slice(begin, end - begin));
  }
  return msg;
}

::testing::AssertionResult Intact(const Message& received, size_t bytes, int keys) {
  const int sender = received.meta.sender();
  const int64_t index = received.meta.request_id();
  const Buffer values = received.vals_buffer();
  auto failure = [&] {
    return ::testing::AssertionFailure() << "message " << index << " from rank " << sender << ": ";
  };
  if (values.size() != bytes) return failure() << values.size() << " bytes, sent " << bytes;
  for (size_t i = 0; i < bytes; ++i) {
    if (values.data()[i] != PatternByte(sender, index, i)) {
      return failure() << "of " << bytes << " bytes, differs at byte " << i;
    }
  }
  if (received.num_keys() != static_cast<size_t>(keys)) {
    return failure() << received.num_keys() << " keys, sent " << keys;
  }
  for (int k = 0; k < keys; ++k) {
    if (received.keys.as<Key>()[k] != static_cast<Key>(index) * 1000 + k) {
      return failure() << "key " << k << " differs";
    }
  }
  return ::testing::AssertionSuccess();
}

Transport::ReceiveHandler Inbox::Handler() {
  return [this](Message&& msg) {
    std::lock_guard<std::mutex> lock(mu_);
    received_.push_back(std::move(msg));
    changed_.notify_all();
  };
}

bool Inbox::WaitFor(size_t count) {
  std::unique_lock<std::mutex> lock(mu_);
  const bool came =
      changed_.wait_for(lock, kMessageDeadline, [&] { return received_.size() >= count; });
  EXPECT_TRUE(came) << received_.size() << " of " << count << " messages came";
  return came;
}

std::vector<Message> Inbox::All() {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

Transport::SendCallback Completions::Callback() {
  return [this](const std::string& error) {
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    if (!error.empty()) errors_.push_back(error);
    changed_.notify_all();
  };
}

bool Completions::WaitFor(int64_t count) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, kMessageDeadline, [&] { return done_ >= count; });
}

int64_t Completions::done() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

std::vector<std::string> Completions::errors() {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

}  // namespace testing
}  // namespace pacer
