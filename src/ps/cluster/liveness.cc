#include "ps/cluster/liveness.h"

#include <algorithm>
#include <cstdio>

#include "common/str_cat.h"

namespace pacer {
namespace {

std::string Seconds(std::chrono::steady_clock::duration d) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", std::chrono::duration<double>(d).count());
  return text;
}

}  // namespace

Liveness::Liveness(const Roles& roles, int rank, std::vector<std::string> hosts,
                   std::chrono::milliseconds timeout, Sender send, LossHandler on_lost)
    : roles_(roles),
      rank_(rank),
      hosts_(std::move(hosts)),
      timeout_(timeout),
      period_(
          std::clamp(timeout / 10, std::chrono::milliseconds(1), std::chrono::milliseconds(500))),
      send_(std::move(send)),
      on_lost_(std::move(on_lost)),
      last_heard_ns_(roles.size()),
      watched_(roles.size()) {
  for (int r = 0; r < roles.size(); ++r) {
    last_heard_ns_[r] = 0;
    // The scheduler watches every rank; the others watch the scheduler.
    watched_[r] = r != rank && (rank == 0 || r == 0);
  }
}

Liveness::~Liveness() { Stop(); }

void Liveness::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Liveness::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Liveness::Heard(const Message& msg) {
  const int sender = msg.meta.sender();
  if (sender < 0 || sender >= roles_.size()) return;
  last_heard_ns_[sender].store(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count(),
      std::memory_order_relaxed);
}

void Liveness::Forget(int rank) {
  if (rank >= 0 && rank < roles_.size()) watched_[rank] = false;
}

void Liveness::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    SendHeartbeats();
    CheckSilence();
    lock.lock();
    wake_.wait_for(lock, period_, [&] { return stopping_; });
  }
}

void Liveness::SendHeartbeats() {
  Message beat;
  beat.meta.set_command(proto::HEARTBEAT);
  beat.meta.set_sender(rank_);
  if (rank_ != 0) {
    send_(0, beat);
    return;
  }
  for (int r = 1; r < roles_.size(); ++r) {
    if (watched_[r]) send_(r, beat);
  }
}

void Liveness::CheckSilence() {
  const Clock::duration now = Clock::now() - start_;
  // A check long overdue: this rank itself was stopped (or starved), and the others' silence is
  // its own. They get a whole timeout from now, in which what they sent meanwhile arrives (an
  // exclusion, say), before any of them is blamed.
  const bool was_stopped =
      last_check_ > Clock::duration::zero() && now - last_check_ > timeout_ / 2;
  last_check_ = now;
  for (int r = 0; r < roles_.size(); ++r) {
    if (was_stopped) {
      last_heard_ns_[r].store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                              std::memory_order_relaxed);
    }
    if (!watched_[r]) continue;
    const Clock::duration heard =
        std::chrono::nanoseconds(last_heard_ns_[r].load(std::memory_order_relaxed));
    if (now - heard < timeout_) continue;
    watched_[r] = false;
    on_lost_(r, Describe(r, now - heard));
  }
}

std::string Liveness::Describe(int rank, Clock::duration silent) const {
  const Clock::duration heard = std::chrono::nanoseconds(last_heard_ns_[rank].load());
  const std::string when =
      heard == Clock::duration::zero()
          ? "never heard from since this rank joined, " + Seconds(silent) + " ago"
          : "last heard from " + Seconds(silent) + " ago, " + Seconds(heard) +
                " after this rank joined";
  const std::string host = rank < static_cast<int>(hosts_.size()) ? hosts_[rank] : "?";
  return StrCat(RoleName(roles_.RoleOf(rank)), " ", roles_.IndexOf(rank), " (rank ", rank,
                " on host ", host, ") stopped answering: ", when,
                " (--heartbeat_timeout_s=", std::chrono::duration<double>(timeout_).count(), ")");
}

}  // namespace pacer
