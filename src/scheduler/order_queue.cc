#include "scheduler/order_queue.h"

#include <utility>

namespace pacer {

OrderQueue::OrderQueue() : thread_([this] { Run(); }) {}

OrderQueue::~OrderQueue() { Stop(); }

bool OrderQueue::Post(std::function<void()> order) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    queue_.push_back(std::move(order));
  }
  wake_.notify_all();
  return true;
}

void OrderQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OrderQueue::Run() {
  for (;;) {
    std::function<void()> order;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      order = std::move(queue_.front());
      queue_.pop_front();
    }
    order();
  }
}

}  // namespace pacer
