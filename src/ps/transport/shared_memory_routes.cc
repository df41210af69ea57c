#include "ps/transport/shared_memory_routes.h"

#include <glog/logging.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include "pacer/error.h"
#include "ps/str_cat.h"

namespace pacer {
namespace {

// What a rank reads from a peer's memory to prove it reads the right process: this word, at the
// address the peer announced, holds the peer's PID mixed with a constant.
constexpr uint64_t kProbeMix = 0x5061636572ull << 24;
uint64_t probe_word = 0;

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

void SharedMemoryRoutes::Connect(MPI_Comm comm) {
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int local_size = 0, local_rank = 0;
  MPI_Comm_size(local, &local_size);
  MPI_Comm_rank(local, &local_rank);
  struct Announcement {
    int32_t rank;
    int64_t pid;
    uint64_t probe;  // the address of probe_word
    SharedMemoryRingInfo ring;
  };
  probe_word = kProbeMix ^ static_cast<uint64_t>(getpid());
  Announcement mine{};  // value-initialized: its padding travels too
  mine.rank = rank_;
  mine.pid = getpid();
  mine.probe = reinterpret_cast<uint64_t>(&probe_word);
  if (ring_) mine.ring = ring_->info();
  std::vector<Announcement> all(local_size);
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, local);
  std::vector<char> reach(local_size, 0);  // this rank's connections, by local rank
  for (int i = 0; i < local_size; ++i) {
    if (i == local_rank) continue;
    const int peer = all[i].rank;
    if (reader_ && CanRead(all[i].pid, all[i].probe)) {
      readable_pids_[peer] = all[i].pid;
      reach[i] |= kReadsMemory;
    }
    if (all[i].ring.pid == 0) continue;
    try {
      peers_[peer] = std::make_unique<SharedMemoryPeer>(peer, all[i].ring);
      reach[i] |= kMapsRing;
    } catch (const Error& e) {
      LOG(WARNING) << "rank " << rank_ << " takes rank " << peer
                   << "'s payloads without shared memory: " << e.what();
    }
  }
  std::vector<char> matrix(static_cast<size_t>(local_size) * local_size);
  MPI_Allgather(reach.data(), local_size, MPI_CHAR, matrix.data(), local_size, MPI_CHAR, local);
  for (int i = 0; i < local_size; ++i) {
    const char theirs = matrix[static_cast<size_t>(i) * local_size + local_rank];
    maps_ours_[all[i].rank] = (theirs & kMapsRing) != 0;
    reads_ours_[all[i].rank] = (theirs & kReadsMemory) != 0;
  }
  MPI_Comm_free(&local);
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

std::vector<uint8_t> SharedMemoryRoutes::Describe(uint64_t token,
                                                  const std::vector<Buffer>& fragments) {
  std::vector<uint64_t> words;
  words.reserve(1 + 2 * fragments.size());
  words.push_back(token);
  for (const Buffer& f : fragments) {
    words.push_back(reinterpret_cast<uint64_t>(f.data()));
    words.push_back(f.size());
  }
  std::vector<uint8_t> description(words.size() * sizeof(uint64_t));
  std::memcpy(description.data(), words.data(), description.size());
  return description;
}

bool SharedMemoryRoutes::ReadDescribed(int sender, const void* body, size_t length, size_t declared,
                                       uint8_t* out, uint64_t* token, std::string* error) {
  *token = 0;
  if (length < sizeof(uint64_t) || (length - sizeof(uint64_t)) % sizeof(RemoteRange) != 0) {
    *error = StrCat("rank ", sender, " sent a payload description of ", length, " bytes");
    return false;
  }
  std::memcpy(token, body, sizeof *token);
  std::vector<RemoteRange> ranges((length - sizeof(uint64_t)) / sizeof(RemoteRange));
  std::memcpy(ranges.data(), static_cast<const uint8_t*>(body) + sizeof(uint64_t),
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
  if (!reader_->Read(static_cast<pid_t>(readable_pids_[sender]), ranges, out, error)) {
    *error = StrCat("rank ", sender, "'s payload of ", declared, " bytes: ", *error);
    return false;
  }
  return true;
}

}  // namespace pacer
