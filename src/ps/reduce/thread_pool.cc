#include "ps/reduce/thread_pool.h"

namespace pacer::reduce {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunParts(const PartFunction& fn, int parts) {
  for (int part = next_part_.fetch_add(1); part < parts; part = next_part_.fetch_add(1)) fn(part);
}

void ThreadPool::Run(int parts, PartFunction fn) {
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  if (parts <= 1 || workers_.empty() || !busy.owns_lock()) {
    for (int part = 0; part < parts; ++part) fn(part);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    task_ = &fn;
    task_parts_ = parts;
    next_part_.store(0);
    active_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  RunParts(fn, parts);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return active_ == 0; });
  task_ = nullptr;
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const PartFunction* fn = task_;
    const int parts = task_parts_;
    lock.unlock();
    RunParts(*fn, parts);
    lock.lock();
    if (--active_ == 0) done_.notify_one();
  }
}

}  // namespace pacer::reduce
