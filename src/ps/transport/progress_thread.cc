#include "ps/transport/progress_thread.h"

#include <glog/logging.h>

namespace pacer {

ProgressThread::~ProgressThread() { Halt(nullptr); }

void ProgressThread::Start(std::function<void()> loop) { thread_ = std::thread(std::move(loop)); }

void ProgressThread::Stop(int rank, double timeout_s,
                          const std::function<bool(std::chrono::milliseconds)>& drain,
                          const std::function<void()>& meet, const std::function<void()>& wake) {
  if (!running()) return;
  if (!drain(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)))) {
    LOG(WARNING) << "rank " << rank << ": sends still in flight after " << timeout_s
                 << " s; stopping anyway";
  }
  meet();
  Halt(wake);
}

void ProgressThread::Halt(const std::function<void()>& wake) {
  if (!running()) return;
  stopping_ = true;
  if (wake) wake();
  thread_.join();
}

}  // namespace pacer
