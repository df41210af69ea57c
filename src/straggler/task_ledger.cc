#include "straggler/task_ledger.h"

#include <stdexcept>
#include <string>

namespace pacer {
namespace straggler {

TaskLedger::TaskLedger(std::vector<std::vector<int64_t>> owned) {
  size_t n = 0;
  for (const std::vector<int64_t>& tasks : owned) n += tasks.size();
  tasks_.assign(n, Task{-1});
  for (size_t w = 0; w < owned.size(); ++w) {
    for (int64_t id : owned[w]) {
      if (id < 0 || static_cast<size_t>(id) >= n) {
        throw std::invalid_argument("task " + std::to_string(id) + " of worker " +
                                    std::to_string(w) + " is outside 0.." + std::to_string(n - 1));
      }
      if (tasks_[id].owner >= 0) {
        throw std::invalid_argument("task " + std::to_string(id) + " is listed for workers " +
                                    std::to_string(tasks_[id].owner) + " and " + std::to_string(w));
      }
      tasks_[id].owner = static_cast<int>(w);
    }
    Owned o;
    o.tasks = std::move(owned[w]);
    o.back = o.tasks.size();
    owned_.push_back(std::move(o));
  }
  running_.assign(owned_.size(), 0);
}

TaskLedger TaskLedger::InShares(const std::vector<int64_t>& shares) {
  std::vector<std::vector<int64_t>> owned(shares.size());
  int64_t next = 0;
  for (size_t w = 0; w < shares.size(); ++w) {
    for (int64_t i = 0; i < shares[w]; ++i) owned[w].push_back(next++);
  }
  return TaskLedger(std::move(owned));
}

void TaskLedger::CheckWorker(int worker, const char* role) const {
  if (worker < 0 || worker >= num_workers()) {
    throw std::invalid_argument(std::string(role) + " " + std::to_string(worker) +
                                " does not exist: the ledger has workers 0.." +
                                std::to_string(num_workers() - 1));
  }
}

TaskLedger::Grant TaskLedger::GrantTask(int64_t id, int worker) {
  tasks_[id].computed_by = worker;
  ++running_[worker];
  return {id, tasks_[id].owner, worker};
}

std::optional<TaskLedger::Grant> TaskLedger::Next(int worker) {
  CheckWorker(worker, "worker");
  Owned& o = owned_[worker];
  if (o.front == o.back) return std::nullopt;
  return GrantTask(o.tasks[o.front++], worker);
}

std::optional<TaskLedger::Grant> TaskLedger::Transfer(int pioneer, int victim) {
  CheckWorker(pioneer, "pioneer");
  CheckWorker(victim, "victim");
  Owned& o = owned_[victim];
  if (o.front == o.back) return std::nullopt;
  return GrantTask(o.tasks[--o.back], pioneer);
}

void TaskLedger::Done(int worker, int64_t task) {
  if (task < 0 || task >= num_tasks()) {
    throw std::invalid_argument("task " + std::to_string(task) +
                                " does not exist: the ledger has " + std::to_string(num_tasks()) +
                                " tasks");
  }
  Task& t = tasks_[task];
  if (t.computed_by != worker) {
    throw std::invalid_argument(
        "worker " + std::to_string(worker) + " reported task " + std::to_string(task) + " done, " +
        (t.computed_by < 0 ? std::string("but nobody was granted it")
                           : "but worker " + std::to_string(t.computed_by) + " was granted it"));
  }
  if (t.done) {
    throw std::invalid_argument("worker " + std::to_string(worker) + " reported task " +
                                std::to_string(task) + " done twice");
  }
  t.done = true;
  ++done_;
  --running_[worker];
}

int64_t TaskLedger::Unstarted(int worker) const {
  CheckWorker(worker, "worker");
  return static_cast<int64_t>(owned_[worker].back - owned_[worker].front);
}

}  // namespace straggler
}  // namespace pacer
