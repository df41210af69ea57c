#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace pacer {
namespace straggler {

// One iteration's tasks and who computes each (Falcon's task transfer, STRAGGLERS.md section 4),
// as pure logic for the one authority that grants them. Every grant goes through the ledger, so a
// task is granted once: no task is computed twice, none is lost, whoever asks first.
//
// Each worker owns a list of tasks and takes them from the front (Next). A pioneer that ran out of
// work takes a straggler's tasks from the back (Transfer): the ones the straggler would reach
// last. A task's gradient counts for its owner, whoever computed it.
class TaskLedger {
 public:
  struct Grant {
    int64_t task;
    int owner;        // whose share the task is: its gradient counts for this worker
    int computed_by;  // who was granted it
  };

  // `owned[w]`: the tasks worker w owns, in the order it runs them. The iteration's tasks are
  // numbered 0..n-1; throws std::invalid_argument unless each is listed exactly once.
  explicit TaskLedger(std::vector<std::vector<int64_t>> owned);
  // Worker w owns the next shares[w] tasks: worker 0 owns 0..shares[0] - 1, and so on.
  static TaskLedger InShares(const std::vector<int64_t>& shares);

  int num_workers() const { return static_cast<int>(owned_.size()); }
  int64_t num_tasks() const { return static_cast<int64_t>(tasks_.size()); }

  // Worker `worker`'s next own task, or none when every one of its tasks is granted (to it or to
  // pioneers).
  std::optional<Grant> Next(int worker);
  // The last task not yet granted of `victim`'s, for `pioneer`; none when the victim has none
  // left.
  std::optional<Grant> Transfer(int pioneer, int victim);
  // Marks a granted task done. Throws std::invalid_argument for a task that does not exist, was
  // not granted to `worker`, or is done already.
  void Done(int worker, int64_t task);

  // Tasks of `worker`'s not yet granted to anyone.
  int64_t Unstarted(int worker) const;
  // Tasks `worker` owns (its share), granted or not.
  int64_t Share(int worker) const {
    CheckWorker(worker, "worker");
    return static_cast<int64_t>(owned_[worker].tasks.size());
  }
  // Tasks granted to `worker` (its own or transferred) and not finished yet.
  int64_t Running(int worker) const { return running_.at(worker); }
  int64_t done() const { return done_; }
  bool Complete() const { return done_ == num_tasks(); }

 private:
  struct Task {
    int owner;
    int computed_by = -1;  // -1: not granted yet
    bool done = false;
  };
  struct Owned {
    std::vector<int64_t> tasks;
    size_t front = 0;  // tasks[front, back) are not granted yet
    size_t back = 0;
  };

  void CheckWorker(int worker, const char* role) const;
  Grant GrantTask(int64_t id, int worker);

  std::vector<Owned> owned_;
  std::vector<Task> tasks_;       // by id
  std::vector<int64_t> running_;  // by the worker granted them
  int64_t done_ = 0;
};

}  // namespace straggler
}  // namespace pacer
