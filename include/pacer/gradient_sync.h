#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pacer/iteration_stats.h"
#include "pacer/task.h"

namespace pacer {

class Node;              // a rank inside a Session (src/ps/node/node.h)
class Session;           // include "pacer/session.h" to make one
class WorkerIterations;  // what a GradientSync runs (src/worker/worker_iterations.h)

/// The training loop's view of the parameter servers (run ParameterServer on the server ranks).
/// Register the model's tensors, then each iteration:
///
/// ```
///   sync.BeginIteration(batch_size);
///   ... compute the gradients ...
///   sync.PushPull("w", grad_w, w);   // asynchronous: w receives the updated parameters
///   sync.EndIteration();             // waits for every PushPull, advances the clock
/// ```
///
/// Gradients are the mean over the worker's batch. The servers combine them by the job's rule
/// (`--sync`) and apply the job's optimizer (`--optimizer`). A tensor larger than
/// `--partition_bytes` is split over several keys, so its load spreads over the servers; smaller
/// neighbours share a key. Host buffers; all methods are for one training thread.
///
/// With tasks (Falcon, STRAGGLERS.md section 4), an iteration's work is micro-batches with ids:
///
/// ```
///   sync.UseTasks(8);                 // once: 8 tasks per worker and iteration
///   sync.BeginIteration(batch_size);
///   while (std::optional<pacer::Task> task = sync.NextTask()) {
///     ... add the gradient of micro-batch (task->clock, task->id) to a local sum ...
///   }
///   ... the mean over the tasks computed (zeros if none) ...
///   sync.PushPull("w", grad_w, w);
///   sync.EndIteration();
/// ```
///
/// Under `--sync=epsp:S` the scheduler grants the tasks: a worker's share follows its measured
/// capacity (elastic parallelism), and a pioneer that finished its share computes a straggler's
/// tasks not yet started (task transfer). The weight of each push is then the tasks the worker
/// computed over tasks_per_worker, so an update counts every task once, whoever computed it: with
/// S = 0 the parameters are BSP's over the same tasks. Under any other mode worker w computes tasks
/// w x tasks_per_worker and on, itself.
class GradientSync {
 public:
  /// On a worker: the training side of `session`, served by the servers' ParameterServer of the
  /// same `app_id`.
  explicit GradientSync(Session& session, int app_id = 0);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  /// Registers `count` floats at `param` as tensor `name`. Every worker registers the same
  /// tensors in the same order, before its first iteration. At the first BeginIteration (or
  /// Broadcast), worker 0's values become the servers' initial state and every worker's `param`
  /// receives them. `param` must stay valid while the GradientSync exists.
  void Register(const std::string& name, float* param, size_t count);
  /// Sends worker 0's values to the servers and every worker's tensors; called by the first
  /// BeginIteration if not before.
  void Broadcast();
  /// Pulls every registered tensor's current parameters into its registered buffer (between
  /// iterations; for instance to evaluate the model once every worker is done, as workers of an
  /// asynchronous mode end with different views). Under BSP and backup it waits, like a pull for
  /// the next iteration, until the current clock is complete.
  void Fetch();

  /// Checkpoints: the servers' state (parameters and optimizer state) and the clock, in one file.
  /// Between iterations, on every worker together: each waits for the others to finish their
  /// iteration, worker 0 writes `path`, then all go on (under any `--sync`). State that lives on
  /// the workers (batch-norm statistics, data order) is the application's to save beside it.
  /// Throws Error naming the path if the file cannot be written (on worker 0, once the others go
  /// on).
  void Checkpoint(const std::string& path);
  /// Resumes a job from a checkpoint instead of starting from worker 0's values: on every worker,
  /// after registering the tensors and before the first iteration; only worker 0 reads `path`.
  /// The servers take up the saved state; every worker receives the parameters, and clock() is
  /// the saved clock. Throws Error naming the path and what differs for a file of other tensors
  /// or another optimizer. The task authority and the job's `--sync` start afresh from that clock.
  void Resume(const std::string& path);

  /// Pushes `grad` (the tensor's count floats) and receives the updated parameters into `param`
  /// (count floats, usually the registered ones) when the rule lets the next iteration start.
  /// Asynchronous: both must stay valid, `grad` unchanged, until the returned handle is waited
  /// for. When `--scheduling_credit` keys are in flight, the others go out by priority (highest
  /// first), then in call order. Throws Error for a tensor not registered or outside an iteration.
  int PushPull(const std::string& name, const float* grad, float* param, int priority = 0);
  /// Blocks until the PushPull's parameters have arrived. Throws Error if it failed, TimeoutError
  /// after timeout_s.
  void Wait(int handle);
  /// Waits for every PushPull not waited for yet; throws as Wait does.
  void WaitAll();

  /// Starts the next iteration; its report carries batch_size(`batch_size`), the size the
  /// scheduler last ordered or else this one. The first call broadcasts worker 0's values unless
  /// Broadcast or Resume did. Throws Error if the iteration has begun already.
  void BeginIteration(int batch_size = 0);
  /// Waits for every PushPull of the iteration and advances the clock.
  void EndIteration();

  /// Splits every iteration into tasks: tasks_per_worker per worker on average, and a share of at
  /// most task_limit for one worker (its node's limit; 0: twice tasks_per_worker; tasks taken from
  /// stragglers come on top). Before the first iteration (else it throws Error); one
  /// GradientSync per job.
  void UseTasks(int64_t tasks_per_worker, int64_t task_limit = 0);
  /// The next task to compute in this iteration, or none once nothing is left for this worker;
  /// calling it again reports the previous task done. Call it until it returns none, before the
  /// iteration's first PushPull. Throws TimeoutError after timeout_s.
  std::optional<Task> NextTask();
  /// Emulated compute, for benchmarks and scenarios: returns once `ms` times the compute slowdown
  /// `--inject` gives this worker now (1 where none) has passed since this compute began (the
  /// iteration's start, or the last NextTask), so that real work done since counts toward it; the
  /// slowdown then adds nothing more to that compute. A replayed trace's slowdown may be below 1
  /// (`trace:...:to=median`, a worker faster than the trace's median), which only emulated compute
  /// can follow. Throws Error outside an iteration or for a negative `ms`.
  void EmulateCompute(double ms);

  /// The iteration this worker is in (a backup worker whose gradients were dropped jumps ahead to
  /// the servers' clock).
  int64_t clock() const;
  /// Sets the weight of this worker's gradients (default 1): updates are the weighted mean of the
  /// workers' gradients (on-arrival modes apply weight x the gradient). A worker that trains on a
  /// different batch size sets its share. With tasks, the tasks computed set it, and setting it
  /// throws Error, as does a weight that is not positive.
  void set_weight(double weight);
  /// The weight of this worker's gradients (see set_weight).
  double weight() const;
  /// The model's test accuracy (0 to 1) where the application measured it: the scheduler's
  /// policies judge training's progress by it (STRET withholds a straggler's gradients where
  /// training gains too little per iteration). It travels with the next iteration report. Throws
  /// Error outside 0 to 1.
  void ReportAccuracy(double accuracy);
  /// The batch sizes this worker can run (once), for the scheduler's batch orders: STRET's tuning
  /// (once for the job, each worker the size whose iteration time matches the fastest worker's)
  /// and SMS's shrink (a predicted straggler's smaller batch for its slow phase, then the full one
  /// again), its gradients weighted by their share of the samples. The iteration's report carries
  /// the size run. Only app 0's GradientSync takes orders: another throws Error.
  void AllowBatchSizes(const std::vector<int>& sizes);
  /// The batch size to run this iteration (after BeginIteration, whose batch size is then the
  /// fallback): the one the scheduler last ordered (see AllowBatchSizes), or `fallback` until then.
  int batch_size(int fallback) const;
  /// What the last iteration (the last EndIteration) cost this worker.
  const IterationStats& last_iteration() const;

 private:
  // What the Session& constructor does, given the node the session hands this role
  // (src/session/role_construction.cc).
  GradientSync(Node& node, int app_id);

  std::unique_ptr<WorkerIterations> iterations_;
};

}  // namespace pacer
