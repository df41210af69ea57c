#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pacer/buffer.h"

namespace pacer {

// What a rank on the same host needs to map a sender's ring (exchanged once, with MPI).
struct SharedMemoryRingInfo {
  int64_t pid = 0;  // 0: the rank has no ring
  int32_t fd = -1;
  uint64_t bytes = 0;
  uint64_t token = 0;  // also in the ring's first bytes: proves the right memory was mapped
};

// Where a payload lies in its sender's ring: all that travels in its message.
struct SharedMemoryLocation {
  uint64_t offset = 0;
  uint64_t length = 0;
  // 1: the payload lies in memory the sender lent out (Lend), read in place and never freed by
  // the reader; 0: in a record the reader frees when it lets go of the payload.
  uint64_t lent = 0;
};

// A sender's ring of shared memory for large payloads to ranks on its host. The sender copies a
// payload into a record of the ring and sends only its location; the reader maps the ring once
// and hands the record out as a Buffer whose release marks it free. This replaces a rendezvous
// (request, ready, a cross-process copy, done) with one small message. The copy into the ring is
// a plain one: streaming stores would send the lines to memory, past the shared cache where the
// reader finds them.
//
// A record goes at the lowest offset where it fits, so a steady stream reuses as few pages as it
// has bytes in flight, and the pages of a ring are touched only as far as the stream reaches.
// When nothing fits, Write returns nothing and the caller sends another way.
//
// The sender can also lend memory of the ring to its own code (Lend): values pushed from there
// need no copy at all, the reader sums them where they lie.
class SharedMemoryRing {
 public:
  // Creates `bytes` (a multiple of 4 KiB) of shared memory. Throws Error if it cannot.
  explicit SharedMemoryRing(size_t bytes);
  ~SharedMemoryRing();
  SharedMemoryRing(const SharedMemoryRing&) = delete;
  SharedMemoryRing& operator=(const SharedMemoryRing&) = delete;

  SharedMemoryRingInfo info() const { return info_; }
  // The largest payload Write takes: a quarter of the ring, so that several are in flight.
  size_t max_payload() const { return capacity_ / 4; }
  // Copies the fragments (`bytes` in all) into a free record and returns where they lie, or
  // nothing when the ring has no room. Thread-safe.
  std::optional<SharedMemoryLocation> Write(const std::vector<Buffer>& fragments, size_t bytes);
  // `bytes` of the ring, 64-byte aligned, for the caller to fill and push from until it returns
  // them (Return); nullptr when the ring has no such room. Thread-safe.
  uint8_t* Lend(size_t bytes);
  void Return(const uint8_t* lent);
  // Where [data, data + bytes) lies, when it lies in memory lent by this ring. Thread-safe.
  std::optional<SharedMemoryLocation> Locate(const uint8_t* data, size_t bytes);
  // Closes the descriptor readers opened the ring through (once all of them have).
  void CloseDescriptor();

 private:
  // Returns the offset of a new record of `record_bytes`, or nothing when no room is free.
  std::optional<uint64_t> Reserve(size_t record_bytes);

  SharedMemoryRingInfo info_;
  uint8_t* base_ = nullptr;
  size_t capacity_ = 0;  // the records' area, after the ring's header
  std::mutex mu_;
  std::vector<std::pair<uint64_t, uint64_t>> live_;  // records not yet reclaimed, by offset: size
  std::vector<std::pair<uint64_t, uint64_t>> lent_;  // lent records' payloads: offset, size
};

// A reader's mapping of one sender's ring.
class SharedMemoryPeer {
 public:
  // Maps the ring `info` describes, of rank `rank`. Throws Error naming the rank and process when
  // it cannot (another PID namespace, no permission, another process's memory).
  SharedMemoryPeer(int rank, const SharedMemoryRingInfo& info);

  // The payload at `where`, as a Buffer that frees its record when the last copy of it goes (a
  // lent one stays the sender's). Returns false with `error` naming the offsets for a location
  // outside the ring.
  bool Read(const SharedMemoryLocation& where, Buffer* payload, std::string* error) const;

 private:
  struct Mapping;
  int rank_;
  std::shared_ptr<Mapping> mapping_;
};

}  // namespace pacer
