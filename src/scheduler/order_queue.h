#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace pacer {

// Carries out the scheduler's orders to its nodes one at a time, in the order posted, on a thread
// of its own: each waits for a node's answer, which the receiving thread that posts them must stay
// free to deliver.
class OrderQueue {
 public:
  OrderQueue();
  ~OrderQueue();
  OrderQueue(const OrderQueue&) = delete;
  OrderQueue& operator=(const OrderQueue&) = delete;

  // False once stopped (the order is dropped).
  bool Post(std::function<void()> order);
  // Drops the orders not yet started and waits for the one under way (cancel its wait first).
  void Stop();

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once the rest is in place
};

}  // namespace pacer
