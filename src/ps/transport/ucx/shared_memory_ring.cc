#include "ps/transport/ucx/shared_memory_ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

constexpr size_t kLine = 64;
// The ring's first line holds its token; records follow, each a line of RecordHeader, then the
// payload rounded up to whole lines.
constexpr size_t kRingHeader = kLine;
constexpr size_t kRecordHeader = kLine;

// The record's first line, alone on it: the reader sets `released` (atomically) when it lets go
// of the record.
struct RecordHeader {
  uint32_t released;
};

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

std::string Errno() { return std::strerror(errno); }

}  // namespace

SharedMemoryRing::SharedMemoryRing(size_t bytes) {
  if (bytes < 4 * kLine || bytes % 4096 != 0) {
    throw Error(StrCat("a shared-memory ring of ", bytes, " bytes: use a multiple of 4096"));
  }
  const int fd = memfd_create("pacer-ring", MFD_CLOEXEC);
  if (fd < 0) throw Error("memfd_create for the shared-memory ring failed: " + Errno());
  // Sized, not allocated: pages come on first touch, and records go lowest first, so the ring
  // costs the memory of the bytes in flight, not its size (memfd's own mount has no size limit).
  const bool sized = ftruncate(fd, static_cast<off_t>(bytes)) == 0;
  void* p = sized ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (p == MAP_FAILED) {
    const std::string why = Errno();
    close(fd);
    throw Error(StrCat("a shared-memory ring of ", bytes, " bytes: ", why));
  }
  base_ = static_cast<uint8_t*>(p);
  capacity_ = bytes - kRingHeader;
  std::random_device random;
  info_.pid = getpid();
  info_.fd = fd;
  info_.bytes = bytes;
  info_.token = (uint64_t{random()} << 32) ^ random() ^ static_cast<uint64_t>(info_.pid);
  std::memcpy(base_, &info_.token, sizeof info_.token);
}

SharedMemoryRing::~SharedMemoryRing() {
  CloseDescriptor();
  munmap(base_, info_.bytes);
}

void SharedMemoryRing::CloseDescriptor() {
  if (info_.fd >= 0) close(info_.fd);
  info_.fd = -1;
}

std::optional<uint64_t> SharedMemoryRing::Reserve(size_t record_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(std::remove_if(live_.begin(), live_.end(),
                             [this](const std::pair<uint64_t, uint64_t>& record) {
                               auto* h = reinterpret_cast<RecordHeader*>(base_ + record.first);
                               return __atomic_load_n(&h->released, __ATOMIC_ACQUIRE) != 0;
                             }),
              live_.end());
  uint64_t at = kRingHeader;  // the first gap that fits
  auto next = live_.begin();
  for (; next != live_.end() && next->first - at < record_bytes; ++next) {
    at = next->first + next->second;
  }
  if (next == live_.end() && info_.bytes - at < record_bytes) return std::nullopt;
  live_.insert(next, {at, record_bytes});
  __atomic_store_n(&reinterpret_cast<RecordHeader*>(base_ + at)->released, 0u, __ATOMIC_RELAXED);
  return at;
}

std::optional<SharedMemoryLocation> SharedMemoryRing::Write(const std::vector<Buffer>& fragments,
                                                            size_t bytes) {
  if (bytes > max_payload()) return std::nullopt;
  const std::optional<uint64_t> record = Reserve(kRecordHeader + RoundUp(bytes, kLine));
  if (!record) return std::nullopt;
  const uint64_t offset = *record + kRecordHeader;
  uint8_t* out = base_ + offset;
  for (const Buffer& f : fragments) {
    // Plain copies, not streaming stores: the reader's core then finds the lines in the shared
    // cache instead of in memory. glibc's memcpy still streams copies too large for that cache.
    if (f.size() > 0) std::memcpy(out, f.data(), f.size());
    out += f.size();
  }
  // The payload's stores come before the message that points at it (x86 keeps stores in order;
  // this orders them for the compiler and for weaker machines).
  std::atomic_thread_fence(std::memory_order_release);
  return SharedMemoryLocation{offset, bytes};
}

uint8_t* SharedMemoryRing::Lend(size_t bytes) {
  if (bytes == 0) return nullptr;
  // A record whose header no reader ever sees, so none marks it released before Return does.
  const std::optional<uint64_t> record = Reserve(kRecordHeader + RoundUp(bytes, kLine));
  if (!record) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  lent_.emplace_back(*record + kRecordHeader, bytes);
  return base_ + *record + kRecordHeader;
}

void SharedMemoryRing::Return(const uint8_t* lent) {
  const uint64_t offset = static_cast<uint64_t>(lent - base_);
  std::lock_guard<std::mutex> lock(mu_);
  auto it =
      std::find_if(lent_.begin(), lent_.end(), [&](const auto& l) { return l.first == offset; });
  if (it == lent_.end())
    throw Error(StrCat("no memory lent at offset ", offset, " of the shared-memory ring"));
  lent_.erase(it);
  __atomic_store_n(&reinterpret_cast<RecordHeader*>(base_ + offset - kRecordHeader)->released, 1u,
                   __ATOMIC_RELEASE);
}

std::optional<SharedMemoryLocation> SharedMemoryRing::Locate(const uint8_t* data, size_t bytes) {
  if (data < base_ || data >= base_ + info_.bytes) return std::nullopt;
  const uint64_t offset = static_cast<uint64_t>(data - base_);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [begin, size] : lent_) {
    if (offset >= begin && offset - begin <= size && bytes <= size - (offset - begin)) {
      std::atomic_thread_fence(std::memory_order_release);  // the caller's stores come first
      return SharedMemoryLocation{offset, bytes, 1};
    }
  }
  return std::nullopt;
}

struct SharedMemoryPeer::Mapping {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  ~Mapping() {
    if (base != nullptr) munmap(base, bytes);
  }
};

SharedMemoryPeer::SharedMemoryPeer(int rank, const SharedMemoryRingInfo& info)
    : rank_(rank), mapping_(std::make_shared<Mapping>()) {
  const std::string path = StrCat("/proc/", info.pid, "/fd/", info.fd);
  auto fail = [&](const std::string& why) {
    throw Error(StrCat("cannot map the shared-memory ring of rank ", rank, " (", path, "): ", why));
  };
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) fail(Errno());
  struct stat st {};
  const bool sized = fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == info.bytes;
  void* p =
      sized ? mmap(nullptr, info.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  if (!sized) fail(StrCat("not the ", info.bytes, " bytes announced"));
  if (p == MAP_FAILED) fail(Errno());
  mapping_->base = static_cast<uint8_t*>(p);
  mapping_->bytes = info.bytes;
  uint64_t token = 0;
  std::memcpy(&token, mapping_->base, sizeof token);
  if (token != info.token) fail("another process's memory (the token differs)");
}

bool SharedMemoryPeer::Read(const SharedMemoryLocation& where, Buffer* payload,
                            std::string* error) const {
  const uint64_t size = mapping_->bytes;
  // A record starts on a line; lent memory is pushed from wherever the caller's values begin.
  if (where.lent > 1 || (where.lent == 0 && where.offset % kLine != 0) ||
      where.offset < kRingHeader + kRecordHeader || where.offset > size ||
      where.length > size - where.offset) {
    *error = StrCat("rank ", rank_, " sent a payload of ", where.length, " bytes at offset ",
                    where.offset, " of its ", size, "-byte shared-memory ring");
    return false;
  }
  if (where.lent == 1) {  // the sender's to reuse once the request is answered
    *payload = Buffer::Lent(mapping_->base + where.offset, where.length, mapping_);
    return true;
  }
  auto* header = reinterpret_cast<RecordHeader*>(mapping_->base + where.offset - kRecordHeader);
  // The owner keeps the mapping, and frees the record when the payload's last copy goes.
  std::shared_ptr<const void> owner(header, [mapping = mapping_](const void* record) {
    auto* h = static_cast<RecordHeader*>(const_cast<void*>(record));
    __atomic_store_n(&h->released, 1u, __ATOMIC_RELEASE);
  });
  *payload = Buffer(mapping_->base + where.offset, where.length, std::move(owner));
  return true;
}

}  // namespace pacer
