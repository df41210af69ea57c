#include "ps/cluster/cluster.h"

#include <glog/logging.h>

#include <algorithm>
#include <thread>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/cluster/liveness.h"

namespace pacer {
namespace {

// The group bit of each role, by Role.
constexpr int kRoleBit[] = {kSchedulerGroup, kServerGroup, kWorkerGroup};

// How long a failing rank lets its last messages (the aborts it sent) go before it abandons the
// transport, so that the others hear why before mpirun ends them.
constexpr auto kAbortLinger = std::chrono::milliseconds(500);

bool ValidGroupFor(int group, Role role) {
  return (group & ~kAllNodes) == 0 && (group & kRoleBit[static_cast<int>(role)]) != 0;
}

}  // namespace

std::string GroupName(int group) {
  std::string name;
  if (group & kSchedulerGroup) name += "scheduler";
  if (group & kServerGroup) name += name.empty() ? "servers" : "+servers";
  if (group & kWorkerGroup) name += name.empty() ? "workers" : "+workers";
  return name.empty() ? "none" : name;
}

Cluster::Cluster(Roles roles, std::unique_ptr<Bootstrap> bootstrap,
                 std::unique_ptr<Transport> transport, bool ranks_fit_cores,
                 std::chrono::milliseconds heartbeat_timeout)
    : roles_(roles),
      bootstrap_(std::move(bootstrap)),
      transport_(std::move(transport)),
      rank_(transport_->rank()),
      transport_name_(transport_->name()),
      ranks_fit_cores_(ranks_fit_cores),
      heartbeat_timeout_(heartbeat_timeout) {}

Cluster::~Cluster() {
  try {
    Close();
  } catch (const std::exception& e) {
    LOG(ERROR) << "rank " << rank_ << ": stopping the transport failed: " << e.what();
  }
}

void Cluster::Start(Dispatcher& dispatcher) {
  dispatcher.Take(proto::BARRIER, [this](Message&& msg) { OnBarrier(msg); });
  dispatcher.Take(proto::BARRIER_RELEASE, [this](Message&& msg) { OnRelease(msg); });
  // Hosts were exchanged when the node settled its host share: this asks no one.
  liveness_ = std::make_unique<Liveness>(
      roles_, rank_, bootstrap_->Hosts(heartbeat_timeout_), heartbeat_timeout_,
      [this](int dst, const Message& msg) { SendWhileRunning(dst, msg); },
      [this](int rank, const std::string& description) { OnLost(rank, description); });
  dispatcher.Take(proto::HEARTBEAT, [this](Message&& msg) { liveness_->Heard(msg); });
  dispatcher.Take(proto::JOB_ABORT, [this](Message&& msg) {
    Fail(msg.meta.error().empty() ? StrCat("rank ", msg.meta.sender(), " aborted the job")
                                  : msg.meta.error());
  });
  dispatcher.Take(proto::WORKER_EXCLUDED, [this](Message&& msg) {
    const int lost = msg.meta.lost_rank();
    if (msg.meta.sender() != 0 || lost < 0 || lost >= roles_.size() ||
        roles_.RoleOf(lost) != Role::kWorker) {
      LOG(ERROR) << "rank " << rank_ << " dropped an exclusion of rank " << lost << " from rank "
                 << msg.meta.sender() << ": only the scheduler excludes, and only workers";
      return;
    }
    OnExcluded(lost, msg.meta.error());
  });
  transport_->SetPayloadConsumers(
      [&dispatcher](const Message& msg) { return dispatcher.Consume(msg); });
  transport_->Start(
      [&dispatcher](Message&& msg) { dispatcher.Dispatch(std::move(msg)); },
      [&dispatcher](const DecodedHeader& header) { return dispatcher.Place(header); });
  {
    std::lock_guard<std::mutex> lock(running_mu_);
    started_ = true;
  }
  liveness_->Start();
}

void Cluster::SurviveLosses(std::function<bool(int rank)> survivable) {
  survivable_ = std::move(survivable);
}

void Cluster::OnLost(int rank, const std::string& description) {
  if (role() != Role::kScheduler || !survivable_ || !survivable_(rank)) {
    Abort(rank, description);
    return;
  }
  Message exclusion;
  exclusion.meta.set_command(proto::WORKER_EXCLUDED);
  exclusion.meta.set_sender(rank_);
  exclusion.meta.set_lost_rank(rank);
  exclusion.meta.set_error(description);
  // The lost rank too: should it come back, it learns why the job went on without it.
  for (int r = 0; r < roles_.size(); ++r) {
    if (r != rank_) SendWhileRunning(r, exclusion);
  }
  OnExcluded(rank, description);
}

void Cluster::OnExcluded(int rank, const std::string& why) {
  if (rank == rank_) {
    Fail(StrCat("the scheduler excluded this rank from the job, which goes on without it: ", why));
    return;
  }
  std::vector<std::function<void(int, const std::string&)>> watchers;
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    if (IsExcluded(rank)) return;
    excluded_.emplace_back(rank, why);
    for (auto& [id, watcher] : exclusion_watchers_) watchers.push_back(watcher);
  }
  LOG(WARNING) << RoleName(role()) << " " << role_index() << " (rank " << rank_
               << "): the job goes on without " << why;
  // Outside the lock: a watcher may answer requests, and a failing send fails the job.
  for (const auto& watcher : watchers) watcher(rank, why);
  if (role() != Role::kScheduler) return;
  std::unique_lock<std::mutex> lock(barrier_mu_);
  for (auto& [group, arrived] : barrier_arrivals_) {
    arrived.erase(std::remove(arrived.begin(), arrived.end(), rank), arrived.end());
    ReleaseIfComplete(group, lock);
  }
}

std::shared_ptr<void> Cluster::WatchExclusions(
    std::function<void(int rank, const std::string& why)> on_excluded) {
  std::vector<std::pair<int, std::string>> already;
  int id;
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    already = excluded_;
    id = next_watcher_++;
    exclusion_watchers_.emplace(id, on_excluded);
  }
  for (const auto& [rank, why] : already) on_excluded(rank, why);
  return std::shared_ptr<void>(nullptr, [this, id](void*) {
    std::lock_guard<std::mutex> lock(failure_mu_);
    exclusion_watchers_.erase(id);
  });
}

bool Cluster::IsExcluded(int rank) const {
  return std::any_of(excluded_.begin(), excluded_.end(),
                     [rank](const auto& excluded) { return excluded.first == rank; });
}

std::vector<int> Cluster::excluded() const {
  std::lock_guard<std::mutex> lock(failure_mu_);
  std::vector<int> ranks;
  for (const auto& [rank, why] : excluded_) ranks.push_back(rank);
  return ranks;
}

void Cluster::Fail(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    if (!failure_.empty()) return;
    failure_ = why;
    LOG(ERROR) << RoleName(role()) << " " << role_index() << " (rank " << rank_
               << "): the job failed: " << why;
    for (auto& [id, watcher] : failure_watchers_) watcher(why);
  }
  std::lock_guard<std::mutex> lock(barrier_mu_);
  barrier_cv_.notify_all();
}

void Cluster::Abort(int lost, const std::string& why) {
  Message abort;
  abort.meta.set_command(proto::JOB_ABORT);
  abort.meta.set_sender(rank_);
  abort.meta.set_error(why);
  for (int r = 0; r < roles_.size(); ++r) {
    if (r != rank_ && r != lost) SendWhileRunning(r, abort);
  }
  Fail(why);
}

std::string Cluster::failure() const {
  std::lock_guard<std::mutex> lock(failure_mu_);
  return failure_;
}

std::shared_ptr<void> Cluster::WatchFailure(std::function<void(const std::string&)> on_failure) {
  std::lock_guard<std::mutex> lock(failure_mu_);
  if (!failure_.empty()) on_failure(failure_);
  const int id = next_watcher_++;
  failure_watchers_.emplace(id, std::move(on_failure));
  return std::shared_ptr<void>(nullptr, [this, id](void*) {
    std::lock_guard<std::mutex> lock(failure_mu_);
    failure_watchers_.erase(id);
  });
}

void Cluster::EndLiveness() {
  if (liveness_) liveness_->Stop();
}

double Cluster::SecondsSinceStart() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Cluster::SendOrLog(int dst, const Message& msg) {
  if (!transport_) {
    LOG(WARNING) << "rank " << rank_ << " dropped " << Describe(msg.meta) << " to rank " << dst
                 << ": it has left the job";
    return;
  }
  try {
    transport_->Send(dst, msg, nullptr);
  } catch (const Error& e) {
    LOG(ERROR) << "rank " << rank_ << ": " << e.what();
  }
}

// The lock keeps the transport from stopping during the send.
void Cluster::SendWhileRunning(int dst, const Message& msg) {
  std::lock_guard<std::mutex> lock(running_mu_);
  if (started_ && !stopped_) SendOrLog(dst, msg);
}

void Cluster::Reject(const proto::Meta& request, const std::string& error) {
  const std::string text = StrCat(RoleName(role()), " rank ", rank_, " rejected ",
                                  Describe(request), " from rank ", request.sender(), ": ", error);
  LOG(WARNING) << text;
  Message reply = ReplyTo(request, rank_);
  reply.meta.set_error(text);
  SendOrLog(request.sender(), reply);
}

int Cluster::GroupSize(int group) const {
  int n = 0;
  if (group & kSchedulerGroup) n += 1;
  if (group & kServerGroup) n += roles_.num_servers();
  if (group & kWorkerGroup) n += roles_.num_workers() - static_cast<int>(excluded().size());
  return n;
}

void Cluster::OnBarrier(const Message& msg) {
  const int group = msg.meta.barrier_group();
  const int sender = msg.meta.sender();
  if (role() != Role::kScheduler) {
    LOG(ERROR) << "rank " << rank_ << " is not the scheduler: dropped a barrier from rank "
               << sender;
    return;
  }
  if (!ValidGroupFor(group, roles_.RoleOf(sender))) {
    LOG(ERROR) << "scheduler dropped a barrier for group " << group << " from rank " << sender
               << ", a " << RoleName(roles_.RoleOf(sender)) << " outside that group";
    return;
  }
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    if (IsExcluded(sender)) {
      LOG(WARNING) << "scheduler dropped a barrier from rank " << sender << ", excluded";
      return;
    }
  }
  std::unique_lock<std::mutex> lock(barrier_mu_);
  barrier_arrivals_[group].push_back(sender);
  ReleaseIfComplete(group, lock);
}

void Cluster::ReleaseIfComplete(int group, std::unique_lock<std::mutex>& barrier_lock) {
  std::vector<int> release;
  // A failed job releases no barrier: a rank that has not yet heard of the failure would leave it
  // for a collective stop that the others never join. Each rank's own abort ends its wait.
  if (!failure().empty()) return;
  std::vector<int>& arrived = barrier_arrivals_[group];
  if (arrived.empty() || static_cast<int>(arrived.size()) < GroupSize(group)) return;
  release.swap(arrived);
  barrier_lock.unlock();
  for (int rank : release) {
    Message reply;
    reply.meta.set_command(proto::BARRIER_RELEASE);
    reply.meta.set_sender(0);
    reply.meta.set_barrier_group(group);
    SendOrLog(rank, reply);
  }
  barrier_lock.lock();
}

void Cluster::OnRelease(const Message& msg) {
  std::lock_guard<std::mutex> lock(barrier_mu_);
  ++barriers_released_[msg.meta.barrier_group()];
  barrier_cv_.notify_all();
}

void Cluster::Barrier(int group, std::optional<std::chrono::milliseconds> timeout) {
  if (!ValidGroupFor(group, role())) {
    throw Error(StrCat("rank ", rank_, " (a ", RoleName(role()),
                       ") cannot enter a barrier of group ", GroupName(group)));
  }
  // A failed rank sends no arrival: a scheduler that has not yet heard of the failure would count
  // it and could release the others.
  if (const std::string why = failure(); !why.empty()) throw LostRankError(why);
  int64_t target;
  {
    std::lock_guard<std::mutex> lock(barrier_mu_);
    target = ++barriers_entered_[group];
  }
  Message request;
  request.meta.set_command(proto::BARRIER);
  request.meta.set_sender(rank_);
  request.meta.set_barrier_group(group);
  transport_->Send(0, request, nullptr);
  std::unique_lock<std::mutex> lock(barrier_mu_);
  std::string why;
  auto released = [&] {
    why = failure();
    return !why.empty() || barriers_released_[group] >= target;
  };
  if (!timeout) {
    barrier_cv_.wait(lock, released);
  } else if (!barrier_cv_.wait_for(lock, *timeout, released)) {
    lock.unlock();
    const std::string why =
        StrCat("barrier of group ", GroupName(group), " (", GroupSize(group),
               " nodes) timed out after ", timeout->count(), " ms on rank ", rank_);
    // This rank's arrival is counted and no later barrier of the job would match the others':
    // the job ends here, on every rank, rather than in a barrier that never completes.
    Abort(-1, why);
    throw TimeoutError(why);
  }
  if (!why.empty()) throw LostRankError(why);
}

void Cluster::Close() {
  EndLiveness();  // before the lock: its thread sends under it
  const bool failed = !failure().empty();
  if (failed) std::this_thread::sleep_for(kAbortLinger);
  // An excluded rank may be frozen: a collective stop or MPI_Finalize would wait for it.
  const bool leave_alone = failed || !excluded().empty();
  {
    std::lock_guard<std::mutex> lock(running_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (started_) {
    if (leave_alone) {
      transport_->Abandon();
    } else {
      transport_->Stop();
    }
  }
  if (leave_alone) bootstrap_->Abandon();
  transport_.reset();
  bootstrap_.reset();
}

}  // namespace pacer
