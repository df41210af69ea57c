#pragma once

#include <cstddef>
#include <cstdint>

namespace pacer {

// Takes a message's values piece by piece as they arrive, straight from the transport's receive
// buffer, instead of receiving them whole into memory of their own: a server sums a pushed piece
// into its store while the piece is still in cache (see UcxTransport's streamed payloads). It is
// made from the message's header (Transport::PayloadConsumerFactory) and travels with the message
// once every piece came (Message::consumer); dropped early, it saw only part of the values.
class PayloadConsumer {
 public:
  virtual ~PayloadConsumer() = default;
  // The `length` bytes of values at byte `offset`, valid only during the call. Pieces come in
  // order, each once, and cover the values exactly.
  virtual void Consume(uint64_t offset, const uint8_t* bytes, size_t length) = 0;
};

}  // namespace pacer
