#include "server/service_reporter.h"

#include <chrono>

#include "ps/node/node.h"
#include "ps/routing/router.h"

namespace pacer {

ServiceReporter::ServiceReporter(Node& node, std::function<int64_t()> queued)
    : node_(node),
      queued_(std::move(queued)),
      range_load_(node.config().balance == "sas"
                      ? std::make_unique<RangeLoadCounter>(node.routing().current()->num_ranges())
                      : nullptr) {
  thread_ = std::thread([this] { Loop(); });
}

ServiceReporter::~ServiceReporter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_.notify_all();
  thread_.join();
}

void ServiceReporter::Loop() {
  const auto interval = std::chrono::milliseconds(std::max(1, node_.config().server_report_ms));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_.wait_for(lock, interval, [&] { return stopping_; })) {
    ServerReport r;
    r.t_s = node_.cluster().SecondsSinceStart();
    r.service_s = static_cast<double>(service_ns_.exchange(0, std::memory_order_relaxed)) * 1e-9;
    r.requests = requests_.exchange(0, std::memory_order_relaxed);
    r.bytes_in = bytes_in_.exchange(0, std::memory_order_relaxed);
    r.bytes_out = bytes_out_.exchange(0, std::memory_order_relaxed);
    r.queue = queued_();
    r.keys = keys_.load(std::memory_order_relaxed);
    if (range_load_) r.range_bytes = range_load_->Take();
    node_.Report(r);
  }
}

}  // namespace pacer
