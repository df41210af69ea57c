#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pacer/buffer.h"
#include "ps/transport/shared_memory_ring.h"

namespace pacer {

// The shared-memory routes between the ranks of one host: this rank's SharedMemoryRing, if it
// sends that way, and its mappings of the others' rings. A payload goes by ring only to a rank that
// mapped it; every other payload goes as before, so a rank that cannot map a peer's ring (another
// PID namespace, no permission) costs speed, never messages.
class SharedMemoryRoutes {
 public:
  // A rank of `size`, with a ring of `ring_bytes` (0: it sends no payload by ring). A ring that
  // cannot be made is logged and left out.
  SharedMemoryRoutes(int rank, int size, size_t ring_bytes);

  // Collective over `comm` (all ranks of the job): the ranks of each host map each other's rings
  // and learn which map theirs.
  void Connect(MPI_Comm comm);

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

 private:
  int rank_;
  std::shared_ptr<SharedMemoryRing> ring_;                // null: no payload goes by ring
  std::vector<std::unique_ptr<SharedMemoryPeer>> peers_;  // by rank: the rings mapped here
  std::vector<bool> maps_ours_;                           // by rank
};

}  // namespace pacer
