#include "ps/cluster/cluster.h"

#include <glog/logging.h>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// The group bit of each role, by Role.
constexpr int kRoleBit[] = {kSchedulerGroup, kServerGroup, kWorkerGroup};

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
                 std::unique_ptr<Transport> transport, bool ranks_fit_cores)
    : roles_(roles),
      bootstrap_(std::move(bootstrap)),
      transport_(std::move(transport)),
      rank_(transport_->rank()),
      transport_name_(transport_->name()),
      ranks_fit_cores_(ranks_fit_cores) {}

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
  transport_->SetPayloadConsumers(
      [&dispatcher](const Message& msg) { return dispatcher.Consume(msg); });
  transport_->Start(
      [&dispatcher](Message&& msg) { dispatcher.Dispatch(std::move(msg)); },
      [&dispatcher](const DecodedHeader& header) { return dispatcher.Place(header); });
  std::lock_guard<std::mutex> lock(running_mu_);
  started_ = true;
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
  if (group & kWorkerGroup) n += roles_.num_workers();
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
  std::vector<int> release;
  {
    std::lock_guard<std::mutex> lock(barrier_mu_);
    std::vector<int>& arrived = barrier_arrivals_[group];
    arrived.push_back(sender);
    if (static_cast<int>(arrived.size()) == GroupSize(group)) release.swap(arrived);
  }
  for (int rank : release) {
    Message reply;
    reply.meta.set_command(proto::BARRIER_RELEASE);
    reply.meta.set_sender(0);
    reply.meta.set_barrier_group(group);
    SendOrLog(rank, reply);
  }
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
  auto released = [&] { return barriers_released_[group] >= target; };
  if (!timeout) {
    barrier_cv_.wait(lock, released);
  } else if (!barrier_cv_.wait_for(lock, *timeout, released)) {
    throw TimeoutError(StrCat("barrier of group ", GroupName(group), " (", GroupSize(group),
                              " nodes) timed out after ", timeout->count(), " ms on rank ", rank_));
  }
}

void Cluster::Close() {
  {
    std::lock_guard<std::mutex> lock(running_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (started_) transport_->Stop();
  transport_.reset();
  bootstrap_.reset();
}

}  // namespace pacer
