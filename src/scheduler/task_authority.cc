#include "scheduler/task_authority.h"

#include <stdexcept>
#include <string>

#include "ps/str_cat.h"
#include "straggler/task_projection.h"

namespace pacer {
TaskAuthority::TaskAuthority(SessionCore& session) : session_(session) {
  session_.SetTaskSink([this](Message&& msg) { OnRequest(std::move(msg)); });
}

TaskAuthority::~TaskAuthority() { session_.SetTaskSink(nullptr); }

void TaskAuthority::OnRequest(Message&& msg) {
  const proto::Meta& request = msg.meta;
  const int worker = request.sender() - 1 - session_.num_servers();
  std::optional<straggler::TaskLedger::Grant> grant;
  try {
    if (session_.RoleOf(request.sender()) != Role::kWorker) {
      throw std::invalid_argument(StrCat("rank ", request.sender(), " is not a worker"));
    }
    if (request.tasks_per_worker() <= 0) {
      throw std::invalid_argument(StrCat("worker ", worker, " asked for tasks of iteration ",
                                         request.clock(), " with ", request.tasks_per_worker(),
                                         " tasks per worker"));
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (request.clock() < complete_below_) {
      if (request.has_task_done()) {
        throw std::invalid_argument(StrCat("worker ", worker, " reported task ",
                                           request.task_done(), " of iteration ", request.clock(),
                                           ", whose tasks are all done"));
      }
    } else {
      auto it =
          iterations_
              .try_emplace(request.clock(), session_.num_workers(), request.tasks_per_worker())
              .first;
      grant = Grant(it->second, worker, request);
      while (!iterations_.empty() && iterations_.begin()->first == complete_below_ &&
             iterations_.begin()->second.ledger.Complete()) {
        iterations_.erase(iterations_.begin());
        ++complete_below_;
      }
    }
  } catch (const std::invalid_argument& e) {
    session_.RejectRequest(request, e.what());
    return;
  }
  Message reply = session_.ReplyTo(request);
  if (grant) {
    reply.meta.set_task(grant->task);
    reply.meta.set_task_owner(grant->owner);
  }
  session_.transport().Send(request.sender(), reply, nullptr);
}

std::optional<straggler::TaskLedger::Grant> TaskAuthority::Grant(Iteration& it, int worker,
                                                                 const proto::Meta& request) {
  if (request.tasks_per_worker() != it.tasks_per_worker) {
    throw std::invalid_argument(StrCat("worker ", worker, " counts ", request.tasks_per_worker(),
                                       " tasks per worker in iteration ", request.clock(),
                                       ", the first to ask counted ", it.tasks_per_worker));
  }
  const double now_s = std::chrono::duration<double>(Clock::now() - it.start).count();
  if (request.has_task_done()) {
    it.ledger.Done(worker, request.task_done());
    it.last_finished_s[worker] = now_s;
  }
  std::optional<straggler::TaskLedger::Grant> grant = it.ledger.Next(worker);
  if (!grant) {
    const int victim = Victim(it, now_s);
    if (victim >= 0) grant = it.ledger.Transfer(worker, victim);
  }
  return grant;
}

int TaskAuthority::Victim(const Iteration& it, double now_s) {
  std::vector<straggler::WorkerProgress> progress;
  std::vector<int64_t> unstarted;
  for (int w = 0; w < it.ledger.num_workers(); ++w) {
    straggler::WorkerProgress p;
    unstarted.push_back(it.ledger.Unstarted(w));
    p.remaining = unstarted.back() + it.ledger.Running(w);
    p.throughput = now_s > 0 ? static_cast<double>(it.ledger.Finished(w)) / now_s : 0;
    p.finished_s = it.last_finished_s[w];
    progress.push_back(p);
  }
  return straggler::ChooseVictim(straggler::Project(progress, now_s), unstarted);
}

}  // namespace pacer
