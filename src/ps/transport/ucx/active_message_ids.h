#pragma once

namespace pacer {

// The active messages of UcxTransport's payload paths; each path sends and receives its own.
enum ActiveMessageId : unsigned {
  kEagerMessageId = 7,       // a payload as the message's data (EagerPath)
  kRingMessageId = 8,        // where the payload lies in the sender's ring (RingPath)
  kDescribedMessageId = 9,   // where the payload lies in the sender's memory (DescribedPath)
  kReleaseMessageId = 10,    // a described payload handed back to its sender (DescribedPath)
  kStreamHeaderId = 11,      // a streamed payload's header and first piece (StreamedPath)
  kStreamPieceId = 12,       // one of its other pieces (StreamedPath)
  kRendezvousMessageId = 13  // a payload by UCX's rendezvous (RendezvousPath)
};

}  // namespace pacer
