#include "ps/transport/shared_memory_routes.h"

#include <glog/logging.h>

#include <cstring>

#include "pacer/error.h"
#include "ps/str_cat.h"

namespace pacer {

SharedMemoryRoutes::SharedMemoryRoutes(int rank, int size, size_t ring_bytes)
    : rank_(rank), peers_(size), maps_ours_(size, false) {
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
    SharedMemoryRingInfo ring;
  };
  Announcement mine{};  // value-initialized: its padding travels too
  mine.rank = rank_;
  if (ring_) mine.ring = ring_->info();
  std::vector<Announcement> all(local_size);
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, local);
  std::vector<char> mapped(local_size, 0);  // the rings this rank mapped, by local rank
  for (int i = 0; i < local_size; ++i) {
    if (i == local_rank || all[i].ring.pid == 0) continue;
    try {
      peers_[all[i].rank] = std::make_unique<SharedMemoryPeer>(all[i].rank, all[i].ring);
      mapped[i] = 1;
    } catch (const Error& e) {
      LOG(WARNING) << "rank " << rank_ << " takes rank " << all[i].rank
                   << "'s payloads without shared memory: " << e.what();
    }
  }
  std::vector<char> matrix(static_cast<size_t>(local_size) * local_size);
  MPI_Allgather(mapped.data(), local_size, MPI_CHAR, matrix.data(), local_size, MPI_CHAR, local);
  for (int i = 0; i < local_size; ++i) {
    maps_ours_[all[i].rank] = matrix[static_cast<size_t>(i) * local_size + local_rank] != 0;
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

}  // namespace pacer
