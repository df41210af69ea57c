#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace pacer::reduce {

// A non-owning reference to a callable, so that handing work to the pool allocates nothing.
class PartFunction {
 public:
  template <typename F>
  PartFunction(F& f)  // NOLINT: implicit, like std::function
      : object_(&f), call_([](void* o, int part) { (*static_cast<F*>(o))(part); }) {}
  void operator()(int part) const { call_(object_, part); }

 private:
  void* object_;
  void (*call_)(void*, int);
};

// A fixed set of threads that, with the calling thread, runs the parts of one operation at a
// time. A caller that finds the pool busy with another caller's operation runs its own parts
// itself: concurrent callers (server threads) never wait for each other.
class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads counts the caller: threads - 1 are started
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(0) ... fn(parts - 1), each once, and returns when all have finished.
  void Run(int parts, PartFunction fn);

 private:
  void WorkerLoop();
  void RunParts(const PartFunction& fn, int parts);

  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the caller whose operation the pool runs
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const PartFunction* task_ = nullptr;
  int task_parts_ = 0;
  uint64_t generation_ = 0;
  int active_ = 0;  // workers still inside the current generation
  bool stop_ = false;
  std::atomic<int> next_part_{0};
};

}  // namespace pacer::reduce
