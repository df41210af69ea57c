#include "ps/transport/ucx/shared_memory_routes.h"

#include <glog/logging.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// What a rank reads from a peer's memory to prove it reads the right process: this word, at the
// address the peer announced, holds the peer's PID mixed with a constant.
constexpr uint64_t kProbeMix = 0x5061636572ull << 24;
// One per process, written once (ranks that are threads of one process share it).
const uint64_t& ProbeWord() {
  static const uint64_t word = kProbeMix ^ static_cast<uint64_t>(getpid());
  return word;
}

bool CanRead(int64_t pid, uint64_t address) {
  uint64_t word = 0;
  iovec local{&word, sizeof word}, remote{reinterpret_cast<void*>(address), sizeof word};
  return process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) == sizeof word &&
         word == (kProbeMix ^ static_cast<uint64_t>(pid));
}

// A connection's bits in the matrix the ranks of a host exchange.
constexpr char kMapsRing = 1, kReadsMemory = 2;

}  // namespace

SharedMemoryRoutes::SharedMemoryRoutes(int rank, int size, size_t ring_bytes, int read_threads)
    : rank_(rank),
      peers_(size),
      maps_ours_(size, false),
      readable_pids_(size, 0),
      reads_ours_(size, false) {
  if (read_threads > 0) reader_ = std::make_unique<CrossMemoryReader>(read_threads);
  if (ring_bytes == 0) return;
  try {
    ring_ = std::make_shared<SharedMemoryRing>(ring_bytes);
  } catch (const Error& e) {
    LOG(WARNING) << "rank " << rank_ << " sends without a shared-memory ring: " << e.what();
  }
}

void SharedMemoryRoutes::Connect(Bootstrap& bootstrap, std::chrono::milliseconds timeout) {
  struct Announcement {
    int64_t pid;
    uint64_t probe;  // the address of ProbeWord()
    SharedMemoryRingInfo ring;
  };
  Announcement mine{};  // value-initialized: its padding travels too
  mine.pid = getpid();
  mine.probe = reinterpret_cast<uint64_t>(&ProbeWord());
  if (ring_) mine.ring = ring_->info();
  const auto* bytes = reinterpret_cast<const uint8_t*>(&mine);
  const std::vector<Bootstrap::Bytes> all =
      bootstrap.AllGather(Bootstrap::Bytes(bytes, bytes + sizeof mine), timeout);
  const std::vector<std::string>& hosts = bootstrap.Hosts(timeout);
  const int size = static_cast<int>(all.size());
  Bootstrap::Bytes reach(size, 0);  // this rank's connections, by rank
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank_ || hosts[peer] != hosts[rank_] || all[peer].size() != sizeof mine) continue;
    Announcement theirs;
    std::memcpy(&theirs, all[peer].data(), sizeof theirs);
    if (reader_ && CanRead(theirs.pid, theirs.probe)) {
      readable_pids_[peer] = theirs.pid;
      reach[peer] |= kReadsMemory;
    }
    if (theirs.ring.pid == 0) continue;
    try {
      peers_[peer] = std::make_unique<SharedMemoryPeer>(peer, theirs.ring);
      reach[peer] |= kMapsRing;
    } catch (const Error& e) {
      LOG(WARNING) << "rank " << rank_ << " takes rank " << peer
                   << "'s payloads without shared memory: " << e.what();
    }
  }
  const std::vector<Bootstrap::Bytes> matrix = bootstrap.AllGather(reach, timeout);
  for (int peer = 0; peer < size; ++peer) {
    const char theirs = matrix[peer].size() == static_cast<size_t>(size) ? matrix[peer][rank_] : 0;
    maps_ours_[peer] = (theirs & kMapsRing) != 0;
    reads_ours_[peer] = (theirs & kReadsMemory) != 0;
  }
  if (ring_) ring_->CloseDescriptor();  // every rank here has opened it, or given up
}

std::shared_ptr<void> SharedMemoryRoutes::Lend(size_t bytes) {
  uint8_t* lent = ring_ ? ring_->Lend(bytes) : nullptr;
  if (lent == nullptr) return nullptr;
  return std::shared_ptr<void>(lent,
                               [ring = ring_](void* p) { ring->Return(static_cast<uint8_t*>(p)); });
}

std::optional<SharedMemoryLocation> SharedMemoryRoutes::Write(int dst,
                                                              const std::vector<Buffer>& fragments,
                                                              size_t bytes) {
  if (!ring_ || !maps_ours_[dst]) return std::nullopt;
  if (fragments.size() == 1) {
    if (auto in_place = ring_->Locate(fragments[0].data(), bytes)) return in_place;
  }
  return ring_->Write(fragments, bytes);
}

bool SharedMemoryRoutes::Read(int sender, const void* body, size_t length, size_t declared,
                              Buffer* payload, std::string* error) const {
  SharedMemoryLocation where;
  if (length != sizeof where) {
    *error = StrCat("rank ", sender, " sent a shared-memory location of ", length, " bytes");
    return false;
  }
  if (!peers_[sender]) {
    *error = StrCat("rank ", sender,
                    " sent a payload in shared memory, but its ring is not mapped here");
    return false;
  }
  std::memcpy(&where, body, sizeof where);
  if (where.length != declared) {
    *error = StrCat("rank ", sender, " sent a payload of ", where.length,
                    " bytes, but its header declares ", declared);
    return false;
  }
  return peers_[sender]->Read(where, payload, error);
}

namespace {

// A description's first words: the token it is released under and the rank it is released to.
struct DescriptionHead {
  uint64_t token;
  int64_t owner;
};

}  // namespace

std::vector<uint8_t> SharedMemoryRoutes::Describe(uint64_t token,
                                                  const std::vector<Buffer>& fragments) const {
  const DescriptionHead head{token, rank_};
  std::vector<RemoteRange> ranges;
  ranges.reserve(fragments.size());
  for (const Buffer& f : fragments)
    ranges.push_back({reinterpret_cast<uint64_t>(f.data()), f.size()});
  std::vector<uint8_t> description(sizeof head + ranges.size() * sizeof(RemoteRange));
  std::memcpy(description.data(), &head, sizeof head);
  if (!ranges.empty()) {
    std::memcpy(description.data() + sizeof head, ranges.data(),
                ranges.size() * sizeof(RemoteRange));
  }
  return description;
}

bool SharedMemoryRoutes::ReleaseOf(const void* body, size_t length, uint64_t* token,
                                   int64_t* owner) {
  DescriptionHead head{};
  if (length < sizeof head) return false;
  std::memcpy(&head, body, sizeof head);
  *token = head.token;
  *owner = head.owner;
  return true;
}

bool SharedMemoryRoutes::ReadDescribed(int sender, const void* body, size_t length, size_t declared,
                                       const std::function<uint8_t*()>& destination,
                                       uint64_t* token, std::string* error) {
  *token = 0;
  DescriptionHead head{};
  if (length < sizeof head || (length - sizeof head) % sizeof(RemoteRange) != 0) {
    *error = StrCat("rank ", sender, " sent a payload description of ", length, " bytes");
    return false;
  }
  std::memcpy(&head, body, sizeof head);
  *token = head.token;
  if (head.owner != sender) {
    *error = StrCat("rank ", sender, " sent a payload description of rank ", head.owner);
    return false;
  }
  std::vector<RemoteRange> ranges((length - sizeof head) / sizeof(RemoteRange));
  std::memcpy(ranges.data(), static_cast<const uint8_t*>(body) + sizeof head,
              ranges.size() * sizeof(RemoteRange));
  uint64_t described = 0;
  for (const RemoteRange& r : ranges) described += r.length;
  if (described != declared) {
    *error = StrCat("rank ", sender, " described a payload of ", described,
                    " bytes, but its header declares ", declared);
    return false;
  }
  if (readable_pids_[sender] == 0) {
    *error = StrCat("rank ", sender, " described a payload in its memory, which this rank (", rank_,
                    ") cannot read");
    return false;
  }
  if (!reader_->Read(static_cast<pid_t>(readable_pids_[sender]), ranges, destination(), error)) {
    *error = StrCat("rank ", sender, "'s payload of ", declared, " bytes: ", *error);
    return false;
  }
  return true;
}

}  // namespace pacer
