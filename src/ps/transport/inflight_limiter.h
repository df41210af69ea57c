#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace pacer {

// Caps the bytes posted but not yet completed per destination. A send that would exceed the cap
// waits in a FIFO per destination (so messages to one peer keep their order) until completions
// make room; a send larger than the cap goes alone. Thread-safe.
template <typename Item>
class InflightLimiter {
 public:
  explicit InflightLimiter(int64_t cap) : cap_(cap) {}

  // Returns the item if it may be posted now (its bytes are then counted), or keeps it queued.
  std::optional<Item> Admit(int dst, int64_t bytes, Item item) {
    std::lock_guard<std::mutex> lock(mu_);
    if (dst >= static_cast<int>(peers_.size())) peers_.resize(dst + 1);
    Peer& p = peers_[dst];
    ++outstanding_;
    if (p.queue.empty() && (p.inflight == 0 || p.inflight + bytes <= cap_)) {
      p.inflight += bytes;
      return item;
    }
    p.queue.emplace_back(bytes, std::move(item));
    return std::nullopt;
  }

  // Records a completed send of `bytes` to `dst`; returns the queued items that may now be posted.
  std::vector<Item> Complete(int dst, int64_t bytes) {
    std::vector<Item> ready;
    std::lock_guard<std::mutex> lock(mu_);
    Peer& p = peers_[dst];
    p.inflight -= bytes;
    while (!p.queue.empty() && (p.inflight == 0 || p.inflight + p.queue.front().first <= cap_)) {
      p.inflight += p.queue.front().first;
      ready.push_back(std::move(p.queue.front().second));
      p.queue.pop_front();
    }
    if (--outstanding_ == 0) idle_.notify_all();
    return ready;
  }

  // Waits until every admitted or queued send completed; false on timeout.
  bool WaitIdle(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return idle_.wait_for(lock, timeout, [&] { return outstanding_ == 0; });
  }

 private:
  struct Peer {
    int64_t inflight = 0;
    std::deque<std::pair<int64_t, Item>> queue;
  };
  std::mutex mu_;
  std::condition_variable idle_;
  std::vector<Peer> peers_;
  const int64_t cap_;
  int64_t outstanding_ = 0;
};

}  // namespace pacer
