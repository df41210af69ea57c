#include "transport_conformance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "pacer/types.h"
#include "test_messages.h"

namespace pacer {
namespace testing {
namespace {

constexpr auto kDeadline = kMessageDeadline;
constexpr int64_t kInflightCap = 1 << 20;

// The transport running for the check's body: started once every rank is ready to receive, and
// stopped (collectively) when the body ends, also where an assertion ended it early.
class Running {
 public:
  Running(Transport& transport, Bootstrap& bootstrap, Inbox& inbox,
          Transport::PayloadPlacer placer = nullptr)
      : transport_(transport), bootstrap_(bootstrap) {
    transport_.Start(inbox.Handler(), std::move(placer));
    bootstrap_.Barrier(kDeadline);
  }
  ~Running() {
    try {
      bootstrap_.Barrier(kDeadline);
      transport_.Stop();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << bootstrap_.rank() << ": stopping failed: " << e.what();
    }
  }

 private:
  Transport& transport_;
  Bootstrap& bootstrap_;
};

int Next(const Bootstrap& b) { return (b.rank() + 1) % b.size(); }
int Previous(const Bootstrap& b) { return (b.rank() + b.size() - 1) % b.size(); }

// Every rank sends each rank (itself too) messages below the rendezvous threshold, of sizes from
// none to 4000 bytes: each rank receives every sender's messages once, intact and in order.
void MessagesArriveInOrder(Transport& transport, Bootstrap& bootstrap) {
  constexpr int kPerPeer = 200;
  const size_t kSizes[] = {0, 1, 100, 1000, 4000};
  Inbox inbox;
  Running running(transport, bootstrap, inbox);
  for (int i = 0; i < kPerPeer; ++i) {
    for (int dst = 0; dst < bootstrap.size(); ++dst) {
      transport.Send(dst, TestMessage(bootstrap.rank(), i, kSizes[i % 5]), nullptr);
    }
  }
  if (!inbox.WaitFor(static_cast<size_t>(kPerPeer) * bootstrap.size())) return;
  std::map<int, int64_t> next_index;  // by sender
  for (const Message& r : inbox.All()) {
    const int sender = r.meta.sender();
    ASSERT_EQ(r.meta.request_id(), next_index[sender]++) << "from rank " << sender;
    ASSERT_TRUE(Intact(r, kSizes[r.meta.request_id() % 5]));
  }
  for (int sender = 0; sender < bootstrap.size(); ++sender) {
    EXPECT_EQ(next_index[sender], kPerPeer) << "from rank " << sender;
  }
}

// Every rank sends the next one payloads from 1 byte to 64 MiB, whole and as a gather list of 3,
// and one whose 300 keys travel in the payload: each arrives once and intact.
void PayloadsOfEverySizeArriveIntact(Transport& transport, Bootstrap& bootstrap) {
  const size_t kSizes[] = {1,
                           7,
                           4096,
                           16383,
                           16384,
                           65537,
                           1 << 20,
                           (1 << 20) + 13,
                           size_t{4} << 20,
                           size_t{33} << 20,
                           size_t{64} << 20};
  constexpr int kManyKeys = 300;
  constexpr size_t kManyKeysBytes = 100000;
  const int n = static_cast<int>(std::size(kSizes));
  Inbox inbox;
  Completions sent;
  {
    Running running(transport, bootstrap, inbox);
    int64_t index = 0;
    for (int fragments : {1, 3}) {
      for (size_t bytes : kSizes) {
        transport.Send(Next(bootstrap), TestMessage(bootstrap.rank(), index++, bytes, fragments),
                       sent.Callback());
      }
    }
    transport.Send(Next(bootstrap),
                   TestMessage(bootstrap.rank(), index++, kManyKeysBytes, 2, kManyKeys),
                   sent.Callback());
    if (!inbox.WaitFor(2 * n + 1)) return;
    EXPECT_TRUE(sent.WaitFor(2 * n + 1));
  }
  EXPECT_EQ(sent.errors(), std::vector<std::string>());
  std::set<int64_t> seen;
  for (const Message& r : inbox.All()) {
    const int64_t index = r.meta.request_id();
    ASSERT_EQ(r.meta.sender(), Previous(bootstrap));
    ASSERT_TRUE(seen.insert(index).second) << "message " << index << " came twice";
    if (index == 2 * n) {
      EXPECT_TRUE(Intact(r, kManyKeysBytes, kManyKeys));
    } else {
      EXPECT_TRUE(Intact(r, kSizes[index % n]));
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(2 * n + 1));
}

// Responses of 1 MiB: where the receiver's placer gives a destination for one, its values land
// there (a pull's answer lands in the caller's buffer without a copy). Every transport that moves
// payloads itself asks (LocalTransport copies every message, and never does).
void LargePayloadsLandWhereTheReceiverPlacesThem(Transport& transport, Bootstrap& bootstrap) {
  constexpr int kMessages = 4;
  constexpr size_t kBytes = 1 << 20;
  std::mutex mu;
  std::map<int64_t, std::vector<uint8_t>> destinations;  // by request id
  auto placer = [&](const DecodedHeader& header) -> uint8_t* {
    if (!header.meta.is_response()) return nullptr;
    std::lock_guard<std::mutex> lock(mu);
    std::vector<uint8_t>& place = destinations[header.meta.request_id()];
    place.assign(header.payload_bytes(), 0);
    return place.data();
  };
  Inbox inbox;
  {
    Running running(transport, bootstrap, inbox, placer);
    for (int i = 0; i < kMessages; ++i) {
      Message msg = TestMessage(bootstrap.rank(), i, kBytes);
      msg.meta.set_is_response(true);
      transport.Send(Next(bootstrap), msg, nullptr);
    }
    if (!inbox.WaitFor(kMessages)) return;
  }
  std::lock_guard<std::mutex> lock(mu);
  for (const Message& r : inbox.All()) {
    EXPECT_TRUE(Intact(r, kBytes));
    auto placed = destinations.find(r.meta.request_id());
    if (placed != destinations.end()) {
      EXPECT_EQ(r.vals.empty() ? nullptr : r.vals[0].data(), placed->second.data())
          << "message " << r.meta.request_id();
    }
  }
  if (transport.name() != "local") {
    EXPECT_EQ(destinations.size(), static_cast<size_t>(kMessages)) << "the placer was not asked";
  }
}

// More than the in-flight cap: 2000 small messages back to back, 24 of 512 KiB, and 3 larger than
// the cap (each goes alone). Every send completes without error, every message arrives once and
// intact, and the small ones in order.
void BackPressureKeepsEverySend(Transport& transport, Bootstrap& bootstrap) {
  constexpr int kSmall = 2000, kMedium = 24, kLarge = 3;
  constexpr size_t kSmallBytes = 4000, kMediumBytes = 512 << 10, kLargeBytes = 2 * kInflightCap;
  auto bytes_of = [&](int64_t index) {
    return index < kSmall ? kSmallBytes : index < kSmall + kMedium ? kMediumBytes : kLargeBytes;
  };
  const int total = kSmall + kMedium + kLarge;
  Inbox inbox;
  Completions sent;
  {
    Running running(transport, bootstrap, inbox);
    for (int i = 0; i < total; ++i) {
      transport.Send(Next(bootstrap), TestMessage(bootstrap.rank(), i, bytes_of(i)),
                     sent.Callback());
    }
    if (!inbox.WaitFor(total)) return;
    EXPECT_TRUE(sent.WaitFor(total)) << sent.done() << " of " << total << " sends completed";
  }
  EXPECT_EQ(sent.errors(), std::vector<std::string>());
  int64_t next_small = 0;
  std::set<int64_t> seen;
  for (const Message& r : inbox.All()) {
    const int64_t index = r.meta.request_id();
    ASSERT_TRUE(seen.insert(index).second) << "message " << index << " came twice";
    if (index < kSmall) {
      EXPECT_EQ(index, next_small++);
    }
    EXPECT_TRUE(Intact(r, bytes_of(index)));
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(total));
}

// Every rank sends 100 payloads of 64 KiB and 100 small messages, then stops at once: the stop
// returns, every send completed exactly once, and what arrived before it arrived once and intact.
void StoppingWithMessagesInFlight(Transport& transport, Bootstrap& bootstrap) {
  constexpr int kEach = 100;
  auto bytes_of = [](int64_t index) { return index % 2 == 0 ? size_t{64} << 10 : size_t{100}; };
  Inbox inbox;
  Completions sent;
  transport.Start(inbox.Handler(), nullptr);
  bootstrap.Barrier(kDeadline);
  for (int i = 0; i < 2 * kEach; ++i) {
    transport.Send(Next(bootstrap), TestMessage(bootstrap.rank(), i, bytes_of(i)), sent.Callback());
  }
  const auto start = std::chrono::steady_clock::now();
  transport.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, kDeadline);
  EXPECT_EQ(sent.done(), 2 * kEach) << "sends completed by the stop";
  EXPECT_EQ(sent.errors(), std::vector<std::string>());
  std::set<int64_t> seen;
  for (const Message& r : inbox.All()) {
    EXPECT_TRUE(seen.insert(r.meta.request_id()).second) << "message came twice";
    EXPECT_TRUE(Intact(r, bytes_of(r.meta.request_id())));
  }
}

// Bytes that are no message, each followed by a good message: the receiver gets the good ones,
// once, intact and in order, and nothing else. Among them headers that claim far more than they
// carry (a length of 2^40 must not be allocated), with small payloads and with payloads large
// enough for every path a transport has for them.
void MalformedFramesAreDropped(Transport& transport, Bootstrap& bootstrap) {
  const int me = bootstrap.rank();
  std::vector<std::pair<std::vector<uint8_t>, std::vector<Buffer>>> bad;
  for (size_t bytes : {size_t{100}, size_t{100000}}) {
    const Message good = TestMessage(me, 999, bytes);
    const std::vector<uint8_t> header = EncodeHeader(good);
    const std::vector<Buffer> payload = PayloadFragments(good);
    bad.emplace_back(std::vector<uint8_t>(header.begin(), header.begin() + 5), payload);
    std::vector<uint8_t> bad_magic = header;
    bad_magic[1] ^= 0x55;
    bad.emplace_back(bad_magic, payload);
    bad.emplace_back(header, std::vector<Buffer>());  // the payload is missing
    std::vector<uint8_t> bad_meta = header;
    for (size_t i = sizeof(WireHeader); i < bad_meta.size(); ++i) bad_meta[i] = 0xff;
    bad.emplace_back(bad_meta, payload);
    std::vector<uint8_t> huge = header;
    WireHeader wire;
    std::memcpy(&wire, huge.data(), sizeof wire);
    wire.vals_bytes = uint64_t{1} << 40;
    std::memcpy(huge.data(), &wire, sizeof wire);
    bad.emplace_back(huge, payload);
    Message stranger = good;
    stranger.meta.set_sender(bootstrap.size() + 5);
    bad.emplace_back(EncodeHeader(stranger), payload);
  }
  Inbox inbox;
  {
    Running running(transport, bootstrap, inbox);
    int64_t index = 0;
    for (auto& [header, payload] : bad) {
      transport.SendBytes(Next(bootstrap), header, payload, nullptr);
      transport.Send(Next(bootstrap), TestMessage(me, index++, 64), nullptr);
    }
    if (!inbox.WaitFor(bad.size())) return;
    bootstrap.Barrier(kDeadline);  // a late bad one would show below
  }
  int64_t next = 0;
  for (const Message& r : inbox.All()) {
    ASSERT_EQ(r.meta.request_id(), next++) << "a malformed message was delivered, or one was lost";
    EXPECT_TRUE(Intact(r, 64));
  }
  EXPECT_EQ(next, static_cast<int64_t>(bad.size()));
}

}  // namespace

const std::vector<ConformanceCheck>& ConformanceChecks() {
  static const std::vector<ConformanceCheck> checks = {
      {"MessagesArriveInOrder", &MessagesArriveInOrder},
      {"PayloadsOfEverySizeArriveIntact", &PayloadsOfEverySizeArriveIntact},
      {"LargePayloadsLandWhereTheReceiverPlacesThem", &LargePayloadsLandWhereTheReceiverPlacesThem},
      {"BackPressureKeepsEverySend", &BackPressureKeepsEverySend},
      {"StoppingWithMessagesInFlight", &StoppingWithMessagesInFlight},
      {"MalformedFramesAreDropped", &MalformedFramesAreDropped},
  };
  return checks;
}

TransportTuning ConformanceTuning() {
  TransportTuning tuning;
  tuning.max_inflight_bytes = kInflightCap;
  tuning.spin_us = 0;
  return tuning;
}

}  // namespace testing
}  // namespace pacer
