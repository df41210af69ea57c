#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "pacer/reducer.h"
#include "ps/messages/payload_consumer.h"

namespace pacer {
namespace detail {

// A push of float values summed into the stored values of its keys piece by piece, as the pieces
// arrive (a PayloadConsumer made by RequestShards). Whoever makes it holds the keys' shard for it;
// `release` gives the shard back when it goes, answered or dropped. A push dropped part way (its
// sender stopped sending pieces) leaves the pieces already summed in the store.
class InPlaceSum : public PayloadConsumer {
 public:
  // `targets[i]`: key i's stored values, `key_offsets[i]`..`key_offsets[i + 1]` its bytes in the
  // push.
  InPlaceSum(Reducer& reducer, std::vector<float*> targets, std::vector<uint64_t> key_offsets,
             std::function<void()> release);
  ~InPlaceSum() override;
  InPlaceSum(const InPlaceSum&) = delete;
  InPlaceSum& operator=(const InPlaceSum&) = delete;

  // Throws Error for a piece that is not whole values or lies past the push.
  void Consume(uint64_t offset, const uint8_t* bytes, size_t length) override;
  // Seconds spent summing (the push's service time).
  double seconds() const { return seconds_; }

 private:
  Reducer& reducer_;
  const std::vector<float*> targets_;
  const std::vector<uint64_t> key_offsets_;
  std::function<void()> release_;
  size_t key_ = 0;  // the key the last piece ended in: pieces come in order
  double seconds_ = 0;
};

}  // namespace detail
}  // namespace pacer
