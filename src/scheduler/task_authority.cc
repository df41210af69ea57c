#include "scheduler/task_authority.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/str_cat.h"
#include "pacer/sync_mode.h"
#include "straggler/elastic_parallelism.h"
#include "straggler/task_projection.h"

namespace pacer {
namespace {

int EpspStaleness(const Config& config) {
  const SyncMode mode = SyncMode::Starting(config.sync);
  return mode.kind == SyncMode::Kind::kEpsp ? mode.staleness : 0;
}

}  // namespace

TaskAuthority::TaskAuthority(Node& node)
    : node_(node),
      staleness_(EpspStaleness(node.config())),
      asked_(node.roles().num_workers(), 0),
      task_seconds_(node.roles().num_workers()) {
  node_.dispatcher().Take(proto::TASK, [this](Message&& msg) { OnRequest(std::move(msg)); });
  // A worker the job goes on without asks for nothing more: iterations are forgotten without it
  // (its unstarted tasks are left to the pioneers, a task it was computing is lost).
  exclusions_ = node_.cluster().WatchExclusions([this](int rank, const std::string&) {
    std::lock_guard<std::mutex> lock(mu_);
    asked_[node_.roles().IndexOf(rank)] = std::numeric_limits<int64_t>::max();
  });
}

TaskAuthority::~TaskAuthority() {
  exclusions_.reset();
  node_.dispatcher().Take(proto::TASK, nullptr);
}

void TaskAuthority::OnRequest(Message&& msg) {
  const proto::Meta& request = msg.meta;
  const int worker = node_.roles().IndexOf(request.sender());
  Answer answer;
  try {
    if (node_.roles().RoleOf(request.sender()) != Role::kWorker) {
      throw std::invalid_argument(StrCat("rank ", request.sender(), " is not a worker"));
    }
    std::lock_guard<std::mutex> lock(mu_);
    answer = Serve(worker, request);
  } catch (const std::exception& e) {  // a bad request, or one too large to hold
    node_.cluster().Reject(request, e.what());
    return;
  }
  Message reply = ReplyTo(request, node_.rank());
  reply.meta.set_task_share(answer.share);
  reply.meta.set_task_deferred(answer.deferred);
  if (answer.grant) {
    reply.meta.set_task(answer.grant->task);
    reply.meta.set_task_owner(answer.grant->owner);
    reply.meta.set_task_clock(answer.grant_clock);
  }
  node_.transport().Send(request.sender(), reply, nullptr);
}

TaskAuthority::Answer TaskAuthority::Serve(int worker, const proto::Meta& request) {
  // A job resumed from a checkpoint (GradientSync::Resume) starts at its clock, not at 0.
  if (!started_ && request.clock() >= 0) {
    started_ = true;
    complete_below_ = request.clock();
    std::fill(asked_.begin(), asked_.end(), request.clock());
  }
  // A worker is at most S + 1 clocks past the last complete iteration, and asks one ahead.
  const int64_t latest = complete_below_ + staleness_ + 2;
  if (request.clock() < 0 || request.clock() > latest) {
    throw std::invalid_argument(StrCat("worker ", worker, " asked for tasks of iteration ",
                                       request.clock(), "; iterations ", complete_below_, " to ",
                                       latest, " can be asked for now"));
  }
  if (request.tasks_per_worker() <= 0 || request.tasks_per_worker() > kMaxTasksPerWorker ||
      request.task_limit() < request.tasks_per_worker()) {
    throw std::invalid_argument(StrCat(
        "worker ", worker, " asked for tasks of iteration ", request.clock(), " with ",
        request.tasks_per_worker(), " tasks per worker and a limit of ", request.task_limit(),
        " (expected 1 to ", kMaxTasksPerWorker, " tasks and a limit of at least as many)"));
  }
  if (app_id_ < 0) app_id_ = request.app_id();
  if (request.app_id() != app_id_) {
    throw std::invalid_argument(StrCat(
        "worker ", worker, "'s GradientSync of app ", request.app_id(),
        " asked for tasks; the GradientSync of app ", app_id_, " uses them (one per job can)"));
  }
  if (request.has_task_done()) RecordDone(worker, request);
  Forget(worker, request.clock());
  Answer answer;
  if (request.clock() >= complete_below_) {  // else pioneers did all its tasks, and the rest
    Iteration& it = Open(worker, request);
    answer.share = it.ledger.Share(worker);
    answer.grant_clock = request.clock();
    if (request.task_prefetch()) {
      // A straggler's next task stays for the pioneers; nobody takes others' tasks ahead.
      const std::vector<int>& stragglers = Project(request.clock(), nullptr, nullptr).stragglers;
      if (std::find(stragglers.begin(), stragglers.end(), worker) == stragglers.end()) {
        answer.grant = it.ledger.Next(worker);
      }
      answer.deferred = !answer.grant;
    } else {
      answer.grant = it.ledger.Next(worker);
      if (!answer.grant) answer.grant = Steal(worker, request.clock(), &answer.grant_clock);
    }
  }
  while (!iterations_.empty() && iterations_.begin()->first == complete_below_ &&
         iterations_.begin()->second.ledger.Complete()) {
    iterations_.erase(iterations_.begin());
    ++complete_below_;
  }
  return answer;
}

// A worker asks for clock c once every task it was granted before c is reported (the report of
// its last one travels with the request that finds none left) and every task of its own is
// granted. So once every worker asked for c, the iterations before c - 1 are complete but for
// grants no worker will report: a prefetched task dropped when an iteration failed. Forgetting
// them keeps the authority's memory bounded.
void TaskAuthority::Forget(int worker, int64_t clock) {
  asked_[worker] = std::max(asked_[worker], clock);
  const int64_t below = *std::min_element(asked_.begin(), asked_.end()) - 1;
  while (!iterations_.empty() && iterations_.begin()->first < below) {
    iterations_.erase(iterations_.begin());
  }
  complete_below_ = std::max(complete_below_, below);
}

void TaskAuthority::RecordDone(int worker, const proto::Meta& request) {
  auto it = iterations_.find(request.task_done_clock());
  if (it == iterations_.end()) {
    throw std::invalid_argument(StrCat("worker ", worker, " reported task ", request.task_done(),
                                       " of iteration ", request.task_done_clock(),
                                       ", which has no tasks running"));
  }
  if (!(request.task_seconds() >= 0) || !std::isfinite(request.task_seconds())) {
    throw std::invalid_argument(StrCat("worker ", worker, " reported task ", request.task_done(),
                                       " took ", request.task_seconds(), " s"));
  }
  it->second.ledger.Done(worker, request.task_done());
  std::deque<double>& durations = task_seconds_[worker];
  durations.push_back(request.task_seconds());
  while (static_cast<int64_t>(durations.size()) > 3 * it->second.tasks_per_worker) {
    durations.pop_front();
  }
}

TaskAuthority::Iteration& TaskAuthority::Open(int worker, const proto::Meta& request) {
  auto it = iterations_.find(request.clock());
  if (it == iterations_.end()) {
    const int workers = node_.roles().num_workers();
    std::vector<double> capacity(workers);
    for (int w = 0; w < workers; ++w) capacity[w] = Capacity(w);
    const std::vector<int64_t> shares = straggler::ElasticShares(
        capacity, workers * request.tasks_per_worker(), 1, request.task_limit());
    it = iterations_
             .try_emplace(request.clock(), shares, request.tasks_per_worker(), request.task_limit())
             .first;
  }
  const Iteration& iteration = it->second;
  if (request.tasks_per_worker() != iteration.tasks_per_worker ||
      request.task_limit() != iteration.task_limit) {
    throw std::invalid_argument(StrCat(
        "worker ", worker, " counts ", request.tasks_per_worker(), " tasks per worker (limit ",
        request.task_limit(), ") in iteration ", request.clock(), ", the first to ask counted ",
        iteration.tasks_per_worker, " (limit ", iteration.task_limit, ")"));
  }
  return it->second;
}

std::optional<straggler::TaskLedger::Grant> TaskAuthority::Steal(int pioneer, int64_t clock,
                                                                 int64_t* grant_clock) {
  // Slack synchronization: the oldest iterations first, as they hold the pioneers back.
  const int64_t first = staleness_ > 0 ? complete_below_ : clock;
  for (auto it = iterations_.lower_bound(first); it != iterations_.end() && it->first <= clock;
       ++it) {
    const int victim = Victim(it->first, it->first < clock, pioneer);
    if (victim < 0) continue;
    *grant_clock = it->first;
    return it->second.ledger.Transfer(pioneer, victim);
  }
  return std::nullopt;
}

straggler::Projection TaskAuthority::Project(int64_t clock, std::vector<int64_t>* unstarted,
                                             double* now) const {
  const Iteration& it = iterations_.at(clock);
  const double now_s = std::chrono::duration<double>(Clock::now() - it.start).count();
  if (now) *now = now_s;
  std::vector<straggler::WorkerProgress> progress;
  for (int w = 0; w < it.ledger.num_workers(); ++w) {
    straggler::WorkerProgress p;
    // What the worker has left to do before it finishes `clock`: its tasks there and before.
    for (auto i = iterations_.begin(); i != iterations_.end() && i->first <= clock; ++i) {
      p.remaining += i->second.ledger.Unstarted(w) + i->second.ledger.Running(w);
    }
    p.throughput = Speed(w);
    p.finished_s = now_s;
    progress.push_back(p);
    if (unstarted) unstarted->push_back(it.ledger.Unstarted(w));
  }
  return straggler::Project(progress, now_s);
}

int TaskAuthority::Victim(int64_t clock, bool behind, int pioneer) const {
  std::vector<int64_t> unstarted;
  double now_s = 0;
  const straggler::Projection projection = Project(clock, &unstarted, &now_s);
  // When the pioneer would finish one task more (unmeasured: at once).
  const double speed = Speed(pioneer);
  const double done_s = now_s + (speed > 0 ? 1 / speed : 0);
  if (!behind) return straggler::ChooseVictim(projection, unstarted, done_s);
  int victim = -1;
  for (int w = 0; w < static_cast<int>(unstarted.size()); ++w) {
    if (unstarted[w] > 0 && projection.finish_s[w] > done_s &&
        (victim < 0 || projection.finish_s[w] > projection.finish_s[victim])) {
      victim = w;
    }
  }
  return victim;
}

double TaskAuthority::Capacity(int worker) const {
  std::vector<double> durations(task_seconds_[worker].begin(), task_seconds_[worker].end());
  if (durations.empty()) return 0;
  std::nth_element(durations.begin(), durations.begin() + durations.size() / 2, durations.end());
  // A report of 0 s (or of 1e-320) must not make the capacity infinite.
  return 1 / std::max(durations[durations.size() / 2], 1e-9);
}

double TaskAuthority::Speed(int worker) const {
  const std::deque<double>& durations = task_seconds_[worker];
  return durations.empty() ? 0 : 1 / std::max(durations.back(), 1e-9);
}

}  // namespace pacer
