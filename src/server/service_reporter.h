#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/range_load_counter.h"

namespace pacer {

class Node;

// Counts one server's service (time handling requests, bytes, keys) and reports it to the
// scheduler every --server_report_ms from a thread of its own, off the request path: recording is
// a few relaxed atomic additions.
class ServiceReporter {
 public:
  // The least work a request counts for, in bytes: its fixed cost. Service time per byte of work
  // then compares servers that hold keys of different sizes.
  static constexpr size_t kRequestWorkBytes = 64 << 10;

  // `queued`: how many requests wait in the shards' queues now.
  ServiceReporter(Node& node, std::function<int64_t()> queued);
  ~ServiceReporter();
  ServiceReporter(const ServiceReporter&) = delete;
  ServiceReporter& operator=(const ServiceReporter&) = delete;

  // `work_bytes`: the request's bytes, at least kRequestWorkBytes.
  void RecordRequest(double service_s, int64_t work_bytes) {
    service_ns_.fetch_add(static_cast<int64_t>(service_s * 1e9), std::memory_order_relaxed);
    bytes_in_.fetch_add(work_bytes, std::memory_order_relaxed);
    requests_.fetch_add(1, std::memory_order_relaxed);
  }
  void RecordResponse(int64_t bytes_out) {
    bytes_out_.fetch_add(bytes_out, std::memory_order_relaxed);
  }
  void AddKeys(int64_t keys) { keys_.fetch_add(keys, std::memory_order_relaxed); }

  // Bytes pushed per key range, counted only when the scheduler balances load (--balance=sas):
  // null otherwise.
  RangeLoadCounter* range_load() { return range_load_.get(); }

 private:
  void Loop();

  Node& node_;
  std::function<int64_t()> queued_;
  std::atomic<int64_t> service_ns_{0}, bytes_in_{0}, bytes_out_{0}, requests_{0}, keys_{0};
  std::unique_ptr<RangeLoadCounter> range_load_;
  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace pacer
