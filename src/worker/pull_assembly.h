#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "pacer/detail/routed_client.h"
#include "ps/messages/message.h"

namespace pacer {

// Value counts per key seen in earlier pulls.
using KnownLengths = std::unordered_map<Key, int32_t>;

// Lays the values of one pull out in the caller's buffer, in request order. Values can be
// received straight into place (no second copy) when their place is known before they arrive: for
// one server, from its response's header; for several, from the lengths of the keys seen in
// earlier pulls. Assemble checks that guess against the responses and repairs the layout when it
// was wrong. Not thread-safe: the owner serializes Place, AddResponse and Assemble.
class PullAssembly {
 public:
  PullAssembly(Buffer keys, int targets, detail::PullDestination destination, size_t value_size);

  // Where the values announced by `header` should be received, or nullptr (a pooled buffer).
  uint8_t* Place(const DecodedHeader& header, const KnownLengths& known);
  void AddResponse(Message&& msg) { responses_.push_back(std::move(msg)); }
  // Writes every value and length to the destination; returns what went wrong (prefixed by
  // `prefix`, naming the operation `what`), or "". `lens` receives the value count of each key.
  std::string Assemble(const std::string& prefix, const char* what, std::vector<int32_t>* lens);

  const Buffer& keys() const { return keys_; }
  int targets() const { return targets_; }

 private:
  const Buffer keys_;
  const int targets_;  // servers asked
  const detail::PullDestination destination_;
  const size_t value_size_;
  std::vector<Message> responses_;
  // Values received straight into the destination: its address and the byte offsets of the
  // keys the layout assumed.
  uint8_t* placed_ = nullptr;
  std::vector<size_t> placed_offsets_;
  bool placement_impossible_ = false;
};

}  // namespace pacer
