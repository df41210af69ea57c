#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ps/bootstrap/bootstrap.h"
#include "ps/cluster/dispatcher.h"
#include "ps/cluster/roles.h"
#include "ps/messages/message.h"
#include "ps/transport/transport.h"

namespace pacer {

class Liveness;

// The members of a job as one node sees them: who it is (rank, role, host), how it reaches the
// others (the bootstrap it met them through and the transport it talks over) and the barriers
// they meet at. The scheduler runs the barriers: every member of a group tells it when it
// arrives, and it releases them all once the last one did. It also knows who is still alive
// (Liveness): a rank lost for good fails the job on every rank that is left, and every wait of
// theirs ends with LostRankError instead of a timeout, unless it is a worker the job can spare
// (SurviveLosses): the job then goes on without it.
class Cluster {
 public:
  // `ranks_fit_cores`: this host's servers and workers have a core each (see HostShares); a rank
  // silent for `heartbeat_timeout` is lost.
  Cluster(Roles roles, std::unique_ptr<Bootstrap> bootstrap, std::unique_ptr<Transport> transport,
          bool ranks_fit_cores, std::chrono::milliseconds heartbeat_timeout);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Takes the barrier messages and starts receiving into `dispatcher`, which must outlive the
  // transport.
  void Start(Dispatcher& dispatcher);

  // On the scheduler, before Start: which lost ranks the job goes on without. The scheduler then
  // excludes such a rank instead of failing the job: every other rank hears it (WORKER_EXCLUDED)
  // and its exclusion watchers run, barriers no longer wait for it, and Close leaves without
  // meeting it. The excluded rank itself, should it come back, fails naming why.
  void SurviveLosses(std::function<bool(int rank)> survivable);
  // Calls `on_excluded` with each excluded rank and why (those excluded already, at once), until
  // the token is dropped; it may run twice for a rank. It runs on the receiving thread (the
  // liveness thread on the scheduler) and must not block.
  std::shared_ptr<void> WatchExclusions(
      std::function<void(int rank, const std::string& why)> on_excluded);
  // The ranks the job goes on without.
  std::vector<int> excluded() const;

  const Roles& roles() const { return roles_; }
  int rank() const { return rank_; }
  Role role() const { return roles_.RoleOf(rank_); }
  int role_index() const { return roles_.IndexOf(rank_); }
  Transport& transport() { return *transport_; }
  // The transport's name ("ucx", "mpi", ...), also once it is closed.
  const std::string& transport_name() const { return transport_name_; }
  // Whether this host's servers and workers have a core each (threads are then rarely preempted).
  bool ranks_fit_cores() const { return ranks_fit_cores_; }
  // Seconds since this node joined: the time axis of injection windows and metrics.
  double SecondsSinceStart() const;

  // Sends `msg`, logging a failure instead of throwing.
  void SendOrLog(int dst, const Message& msg);
  // The same, but drops the message once the transport stopped: for reports from threads that
  // may outlive it.
  void SendWhileRunning(int dst, const Message& msg);
  // Answers `request` with an error naming this node; logs it too.
  void Reject(const proto::Meta& request, const std::string& error);

  // Blocks until every node of `group` (NodeGroup bits) has entered the same barrier; without
  // `timeout` it waits as long as every rank is alive. Throws TimeoutError after `timeout`, and
  // LostRankError once the job failed.
  void Barrier(int group, std::optional<std::chrono::milliseconds> timeout);

  // Fails the job on this rank: records `why` (the first reason wins), logs it, ends the waits
  // (barriers and every watcher's). Close then leaves without meeting the other ranks.
  void Fail(const std::string& why);
  // The same, and tells every other rank but `lost` (JOB_ABORT) so that they fail with `why`.
  void Abort(int lost, const std::string& why);
  // Why the job failed; empty while it has not.
  std::string failure() const;
  // Calls `on_failure` with the reason once the job fails (at once if it has), until the returned
  // token is dropped. It runs on the thread that failed the job and must not block.
  std::shared_ptr<void> WatchFailure(std::function<void(const std::string& why)> on_failure);
  // Stops heartbeats and the watch for lost ranks: the job's last barrier passed, and ranks may
  // now leave at their own pace.
  void EndLiveness();
  // Completes this node's sends, stops the transport and leaves the bootstrap (which finalizes MPI
  // where it initialized it). Collective: every node calls it. Sends are dropped from then on.
  // After a failure it is not: it lets this rank's last messages go, then abandons both.
  void Close();

 private:
  void OnBarrier(const Message& msg);  // the scheduler's side
  void OnRelease(const Message& msg);
  void OnLost(int rank, const std::string& description);
  void OnExcluded(int rank, const std::string& why);
  bool IsExcluded(int rank) const;  // under failure_mu_
  // The members of `group` still in the job; releases the current barrier once they all arrived.
  int GroupSize(int group) const;
  void ReleaseIfComplete(int group, std::unique_lock<std::mutex>& barrier_lock);

  const Roles roles_;
  std::unique_ptr<Bootstrap> bootstrap_;
  std::unique_ptr<Transport> transport_;
  const int rank_;
  const std::string transport_name_;
  const bool ranks_fit_cores_;
  const std::chrono::milliseconds heartbeat_timeout_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::unique_ptr<Liveness> liveness_;  // from Start

  mutable std::mutex failure_mu_;
  std::string failure_;
  int next_watcher_ = 0;
  std::map<int, std::function<void(const std::string&)>> failure_watchers_;

  std::function<bool(int rank)> survivable_;
  std::vector<std::pair<int, std::string>> excluded_;  // under failure_mu_, as are its watchers
  std::map<int, std::function<void(int, const std::string&)>> exclusion_watchers_;

  std::mutex running_mu_;
  bool started_ = false;
  bool stopped_ = false;

  // On every node, how many barriers of each group were entered and released; on the scheduler,
  // which ranks have arrived at each group's current barrier.
  std::mutex barrier_mu_;
  std::condition_variable barrier_cv_;
  std::map<int, int64_t> barriers_entered_;
  std::map<int, int64_t> barriers_released_;
  std::map<int, std::vector<int>> barrier_arrivals_;
};

// The name of a barrier group, as errors spell it ("servers+workers").
std::string GroupName(int group);

}  // namespace pacer
