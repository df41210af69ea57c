#include "scheduler/range_mover.h"

#include <glog/logging.h>

namespace pacer {

RangeMover::RangeMover(Node& node, Done done)
    : control_(node, /*app_id=*/0), done_(std::move(done)), thread_([this] { Run(); }) {}

RangeMover::~RangeMover() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  control_.Cancel();
  ready_.notify_all();
  thread_.join();
}

void RangeMover::Request(const Order& order) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    orders_.push_back(order);
  }
  ready_.notify_all();
}

bool RangeMover::idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return orders_.empty() && !moving_;
}

void RangeMover::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ready_.wait(lock, [&] { return stopping_ || !orders_.empty(); });
    if (stopping_) return;  // moves not begun are dropped: the job is ending
    const Order order = orders_.front();
    orders_.pop_front();
    moving_ = true;
    lock.unlock();
    try {
      done_(order, control_.MoveRange(order.range, order.to));
    } catch (const std::exception& e) {
      LOG(WARNING) << "iteration " << order.iteration << ": moving range " << order.range
                   << " to server " << order.to << " failed: " << e.what();
    }
    lock.lock();
    moving_ = false;
  }
}

}  // namespace pacer
