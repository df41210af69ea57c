#include "ps/transport/ucx/cross_memory_reader.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/spin_policy.h"
#include "common/str_cat.h"

namespace pacer {
namespace {

constexpr size_t kMaxRemoteIov = 1024;  // the kernel's UIO_MAXIOV
constexpr uint64_t kPage = 4096;
// How long a helper polls for the next read before it sleeps, while reads come that close: a
// stream's reads come closer together than a wake-up takes.
constexpr auto kHelperSpin = std::chrono::microseconds(200);

}  // namespace

CrossMemoryReader::CrossMemoryReader(int threads) {
  const size_t helpers = static_cast<size_t>(std::max(1, threads) - 1);
  pieces_.resize(helpers + 1);
  for (size_t i = 0; i < helpers; ++i) helpers_.emplace_back([this, i] { RunHelper(i); });
}

CrossMemoryReader::~CrossMemoryReader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

bool CrossMemoryReader::Read(pid_t pid, const std::vector<RemoteRange>& ranges, uint8_t* out,
                             std::string* error) {
  uint64_t total = 0;
  for (const RemoteRange& r : ranges) total += r.length;
  if (total < kMinSplitBytes || pieces_.size() == 1) {  // the caller's thread alone
    Piece whole{pid, &ranges, 0, total, out, {}};
    ReadPiece(&whole);
    if (whole.error.empty()) return true;
    *error = std::move(whole.error);
    return false;
  }
  std::lock_guard<std::mutex> serial(read_mu_);
  const size_t parts = pieces_.size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t k = 0; k < parts; ++k) {
      // Pieces are whole pages but the last: where the output is page-aligned (a pooled buffer),
      // no two threads write one page.
      const uint64_t begin = k == 0 ? 0 : total * k / parts / kPage * kPage;
      const uint64_t end = k + 1 == parts ? total : total * (k + 1) / parts / kPage * kPage;
      pieces_[k] = Piece{pid, &ranges, begin, end, out, {}};
    }
    pending_ = parts - 1;
    ++generation_;
  }
  start_.notify_all();
  ReadPiece(&pieces_[0]);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
  for (size_t k = 0; k < parts; ++k) {
    if (!pieces_[k].error.empty()) {
      *error = pieces_[k].error;
      return false;
    }
  }
  return true;
}

void CrossMemoryReader::ReadPiece(Piece* piece) {
  const std::vector<RemoteRange>& ranges = *piece->ranges;
  size_t first = 0;       // the range holding `offset`
  uint64_t first_at = 0;  // its offset in the concatenation
  uint64_t offset = piece->begin;
  iovec remote[kMaxRemoteIov];
  while (offset < piece->end) {
    while (first_at + ranges[first].length <= offset) first_at += ranges[first++].length;
    size_t count = 0;
    uint64_t at = offset, range_at = first_at;
    for (size_t i = first; count < kMaxRemoteIov && at < piece->end;
         range_at += ranges[i++].length) {
      const uint64_t skip = at - range_at;
      const uint64_t take = std::min(ranges[i].length - skip, piece->end - at);
      if (take == 0) continue;
      remote[count++] = {reinterpret_cast<void*>(ranges[i].address + skip), take};
      at += take;
    }
    iovec local{piece->out + offset, at - offset};
    const ssize_t got = process_vm_readv(piece->pid, &local, 1, remote, count, 0);
    if (got <= 0) {
      piece->error =
          StrCat("reading ", at - offset, " bytes of process ", piece->pid, " at ",
                 remote[0].iov_base, ": ", got == 0 ? "nothing read" : std::strerror(errno));
      return;
    }
    offset += static_cast<uint64_t>(got);
  }
}

void CrossMemoryReader::RunHelper(size_t index) {
  uint64_t seen = 0;
  IdlePoller poller(kHelperSpin);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    lock.unlock();
    while (generation_.load(std::memory_order_acquire) == seen && poller.PollAgain(false)) {
    }
    lock.lock();
    start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    Piece* piece = &pieces_[index + 1];
    lock.unlock();
    poller.PollAgain(true);
    ReadPiece(piece);
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace pacer
