#include "worker/request_tracker.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include "pacer/error.h"
#include "ps/transport/transport.h"

namespace pacer {

int RequestTracker::Start(int parts) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failure_.empty()) throw LostRankError(failure_);
  int ts = next_timestamp_++;
  entries_[ts].remaining = parts;
  return ts;
}

bool RequestTracker::PartDone(int timestamp, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(timestamp);
  if (it == entries_.end()) return false;
  Entry& e = it->second;
  if (!error.empty() && e.error.empty()) e.error = error;
  return --e.remaining == 0;
}

void RequestTracker::AddParts(int timestamp, int parts) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(timestamp);
  if (it != entries_.end()) it->second.remaining += parts;
}

std::string RequestTracker::ErrorOf(int timestamp) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(timestamp);
  return it == entries_.end() ? std::string() : it->second.error;
}

void RequestTracker::Finish(int timestamp, const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(timestamp);
    if (it == entries_.end()) return;
    if (!error.empty() && it->second.error.empty()) it->second.error = error;
    it->second.finished = true;
  }
  finished_.notify_all();
}

void RequestTracker::FailAll(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_.empty()) return;
    failure_ = why;
    for (auto& [timestamp, entry] : entries_) entry.finished = true;
  }
  finished_.notify_all();
}

bool RequestTracker::Wait(int timestamp, std::chrono::milliseconds timeout, bool throw_on_timeout,
                          SpinPolicy* spin, Transport* transport) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  auto it = entries_.find(timestamp);
  if (it == entries_.end()) {
    std::ostringstream s;
    s << "Wait on unknown timestamp " << timestamp << " on rank " << rank_
      << ": it was never returned by this KVWorker, or was already waited for";
    throw Error(s.str());
  }
  const std::chrono::microseconds budget = spin ? spin->Budget() : std::chrono::microseconds(0);
  const auto deadline = start + timeout;
  if (!it->second.finished) {
    // Only this waiter erases the entry, so it stays put while we poll without the lock.
    const std::atomic<bool>& finished = it->second.finished;
    auto done = [&finished] { return finished.load(std::memory_order_acquire); };
    lock.unlock();
    if (!(transport && transport->PollUntil(done, deadline, budget))) {
      const auto spin_end = start + std::min<std::chrono::microseconds>(budget, timeout);
      while (!done() && std::chrono::steady_clock::now() < spin_end) std::this_thread::yield();
    }
    lock.lock();
  }
  if (!finished_.wait_until(lock, deadline, [&] { return it->second.finished.load(); })) {
    if (!throw_on_timeout) return false;
    std::ostringstream s;
    s << "request " << timestamp << " on rank " << rank_ << " not finished after "
      << timeout.count() << " ms (" << it->second.remaining << " parts outstanding)";
    entries_.erase(it);
    throw TimeoutError(s.str());
  }
  if (spin) spin->RecordGap(std::chrono::steady_clock::now() - start);
  std::string error = std::move(it->second.error);
  entries_.erase(it);
  if (!failure_.empty()) throw LostRankError(failure_);
  if (!error.empty()) throw Error(error);
  return true;
}

}  // namespace pacer
