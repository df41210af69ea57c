#include "ps/transport/shaped_transport.h"

#include <algorithm>

namespace pacer {

ShapedTransport::ShapedTransport(std::unique_ptr<Transport> inner, std::vector<FaultSpec> faults,
                                 std::vector<int> server_ranks, std::vector<int> worker_ranks,
                                 uint64_t seed)
    : inner_(std::move(inner)),
      faults_(std::move(faults)),
      server_ranks_(std::move(server_ranks)),
      worker_ranks_(std::move(worker_ranks)),
      seed_(seed),
      link_free_(inner_->size(), Clock::time_point()),
      last_release_(inner_->size(), Clock::time_point()) {
  releaser_ = std::thread([this] { ReleaseLoop(); });
}

ShapedTransport::~ShapedTransport() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (releaser_.joinable()) releaser_.join();
}

bool ShapedTransport::Matches(const FaultSpec::Node& end, int rank) const {
  switch (end.by) {
    case FaultSpec::Node::By::kAny:
      return true;
    case FaultSpec::Node::By::kRank:
      return end.number == rank;
    case FaultSpec::Node::By::kServer:
      return end.number < static_cast<int>(server_ranks_.size()) &&
             server_ranks_[end.number] == rank;
    case FaultSpec::Node::By::kWorker:
      return end.number < static_cast<int>(worker_ranks_.size()) &&
             worker_ranks_[end.number] == rank;
  }
  return false;
}

void ShapedTransport::SendBytes(int dst, std::vector<uint8_t> header, std::vector<Buffer> payload,
                                SendCallback on_sent) {
  CheckDestination(dst);
  size_t bytes = header.size();
  for (const Buffer& b : payload) bytes += b.size();
  const Clock::time_point now = Clock::now();
  const double since_start = std::chrono::duration<double>(now - start_).count();
  std::unique_lock<std::mutex> lock(mu_);
  Clock::time_point release = now;
  const uint64_t sequence = sequence_++;
  for (const FaultSpec& f : faults_) {
    if (f.target != FaultSpec::Target::kLink || !Matches(f.from, rank()) || !Matches(f.to, dst) ||
        !f.ActiveAt(static_cast<int64_t>(sequence), since_start, rank(), seed_)) {
      continue;
    }
    if (f.effect == FaultSpec::Effect::kBandwidth) {
      const auto occupied = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(static_cast<double>(bytes) / f.value));
      link_free_[dst] = std::max(link_free_[dst], now) + occupied;
      release = std::max(release, link_free_[dst]);
    } else if (f.effect == FaultSpec::Effect::kDelay) {
      release +=
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(f.value));
    }
  }
  release = std::max(release, last_release_[dst]);  // in order per destination
  last_release_[dst] = release;
  if (release <= now && held_.empty()) {  // an unshaped link: no detour
    lock.unlock();
    inner_->SendBytes(dst, std::move(header), std::move(payload), std::move(on_sent));
    return;
  }
  held_.push({release, sequence, dst, std::move(header), std::move(payload), std::move(on_sent)});
  changed_.notify_all();
}

void ShapedTransport::ReleaseLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (held_.empty()) {
      if (stopping_) return;
      changed_.wait(lock);
      continue;
    }
    const Clock::time_point next = held_.top().release;
    if (!stopping_ && Clock::now() < next) {
      changed_.wait_until(lock, next);
      continue;
    }
    Held h = std::move(const_cast<Held&>(held_.top()));
    held_.pop();
    lock.unlock();
    try {
      inner_->SendBytes(h.dst, std::move(h.header), std::move(h.payload), std::move(h.on_sent));
    } catch (const std::exception& e) {
      if (h.on_sent) h.on_sent(e.what());
    }
    lock.lock();
  }
}

void ShapedTransport::StopReleaser() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;  // the releaser sends what is held at once, then ends
  }
  changed_.notify_all();
  if (releaser_.joinable()) releaser_.join();
}

void ShapedTransport::Stop() {
  StopReleaser();
  inner_->Stop();
}

void ShapedTransport::Abandon() {
  StopReleaser();
  inner_->Abandon();
}

}  // namespace pacer
