#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pacer {

// A range of another process's memory.
struct RemoteRange {
  uint64_t address = 0;
  uint64_t length = 0;
};

// Reads another process's memory into this one's (Linux cross-memory attach, process_vm_readv),
// a large read split over several threads: the caller's and `threads - 1` helpers. One thread's
// copy is bound by how many cache misses one core keeps in flight, not by the memory. Split reads
// are serialized; the helpers sleep between them.
class CrossMemoryReader {
 public:
  // Reads smaller than this are not split (a helper's wake-up would cost more than it saves).
  static constexpr size_t kMinSplitBytes = 512 << 10;

  explicit CrossMemoryReader(int threads);
  ~CrossMemoryReader();
  CrossMemoryReader(const CrossMemoryReader&) = delete;
  CrossMemoryReader& operator=(const CrossMemoryReader&) = delete;

  // Copies `ranges` of process `pid`, in order, to `out` (their total length). Returns false with
  // `error` naming the process, the bytes and the system's reason when the memory cannot be read.
  bool Read(pid_t pid, const std::vector<RemoteRange>& ranges, uint8_t* out, std::string* error);

 private:
  struct Piece {
    pid_t pid = 0;
    const std::vector<RemoteRange>* ranges = nullptr;
    uint64_t begin = 0, end = 0;  // byte offsets into the ranges' concatenation
    uint8_t* out = nullptr;
    std::string error;
  };
  static void ReadPiece(Piece* piece);
  void RunHelper(size_t index);

  std::mutex read_mu_;  // one split Read at a time
  std::mutex mu_;
  std::condition_variable start_, done_;
  std::vector<Piece> pieces_;            // [0] is the caller's; [i + 1] helper i's
  std::atomic<uint64_t> generation_{0};  // bumped per split read; helpers run each one once
  size_t pending_ = 0;                   // helpers still reading the current generation
  bool stopping_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace pacer
