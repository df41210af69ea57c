#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pacer/buffer.h"
#include "ps/bootstrap/bootstrap.h"
#include "ps/transport/ucx/cross_memory_reader.h"
#include "ps/transport/ucx/shared_memory_ring.h"

namespace pacer {

// The shared-memory routes between the ranks of one host: this rank's SharedMemoryRing, if it
// sends that way, and its mappings of the others' rings; and cross-memory reads, where a payload
// stays in its sender's memory, its message says where, and the receiver copies it out with
// several threads (CrossMemoryReader). A payload goes by ring only to a rank that mapped it, by
// description only to a rank that proved it can read this one's memory; every other payload goes
// as before, so a rank that cannot (another PID namespace, no permission) costs speed, never
// messages.
class SharedMemoryRoutes {
 public:
  // A rank of `size`, with a ring of `ring_bytes` (0: it sends no payload by ring), reading
  // described payloads with `read_threads` threads (0: it takes none, and no peer sends it any).
  // A ring that cannot be made is logged and left out.
  SharedMemoryRoutes(int rank, int size, size_t ring_bytes, int read_threads);

  // Collective over the job's ranks: the ranks of each host map each other's rings, try to read
  // each other's memory, and learn which map theirs and which read theirs.
  void Connect(Bootstrap& bootstrap, std::chrono::milliseconds timeout);

  // `bytes` of this rank's ring lent to its code, returned when the last copy of the pointer
  // goes (the ring lives as long); null without a ring or room in it.
  std::shared_ptr<void> Lend(size_t bytes);

  // Where the payload (`bytes` in all) lies in this rank's ring for `dst`: a payload of one
  // fragment in lent memory as it is, any other copied into a record. Nothing when `dst` has not
  // mapped the ring, the payload is too large or there is no room.
  std::optional<SharedMemoryLocation> Write(int dst, const std::vector<Buffer>& fragments,
                                            size_t bytes);

  // The payload a location message from `sender` points at: `body` of `length` bytes is the
  // location, `declared` the payload's length in the message's header. Returns false with `error`
  // naming the sender and sizes for a message that does not describe a record of its ring.
  bool Read(int sender, const void* body, size_t length, size_t declared, Buffer* payload,
            std::string* error) const;

  // Whether `dst` reads this rank's memory: then a payload can go to it as a description.
  bool ReadsOurs(int dst) const { return reads_ours_[dst]; }
  // The description of `fragments` in this rank's memory, which the reader hands back to this rank
  // under `token` (nonzero) once it has copied them. They must stay as they are until then.
  std::vector<uint8_t> Describe(uint64_t token, const std::vector<Buffer>& fragments) const;
  // Whom a description (`body` of `length` bytes) is to be handed back to, and under which token:
  // false where it is too short to say. A description says so itself, so that one whose message
  // is malformed is still handed back and its sender's send completes.
  static bool ReleaseOf(const void* body, size_t length, uint64_t* token, int64_t* owner);
  // Copies the payload a description from `sender` (`body` of `length` bytes) points at into the
  // `declared` bytes (the header's payload length) that `destination` gives, once the description
  // proved to describe that many. Sets `token` (0 when the description is too short to hold one)
  // and returns true; false with `error` naming the sender and sizes when the description does not
  // fit the header or the memory cannot be read.
  bool ReadDescribed(int sender, const void* body, size_t length, size_t declared,
                     const std::function<uint8_t*()>& destination, uint64_t* token,
                     std::string* error);

 private:
  int rank_;
  std::shared_ptr<SharedMemoryRing> ring_;                // null: no payload goes by ring
  std::vector<std::unique_ptr<SharedMemoryPeer>> peers_;  // by rank: the rings mapped here
  std::vector<bool> maps_ours_;                           // by rank
  std::unique_ptr<CrossMemoryReader> reader_;             // null: this rank reads no peer
  std::vector<int64_t> readable_pids_;                    // by rank: 0 where not readable
  std::vector<bool> reads_ours_;                          // by rank
};

}  // namespace pacer
