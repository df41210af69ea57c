#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pacer/session.h"
#include "pacer/types.h"

namespace pacer {
namespace testing {

// Concatenates equally long vectors from every worker, in worker order (called on workers only).
using WorkerGather = std::function<std::vector<double>(const std::vector<double>&)>;

struct TrainingOptions {
  int iterations = 60;
  int batch = 32;
  float lr = 0.5f;
  int64_t partition_bytes = 64;  // splits the weights over keys, groups biases with the counter
  int slow_worker = -1;          // this worker sleeps slow_ms more per iteration
  int slow_ms = 0;
  double max_loss = 0.6;  // the final loss over all data must be lower (it starts near 1.4)
  // BSP only: the parameters equal a single-process run of the same iterations within 1e-6.
  bool check_reference = false;
  // SSP(s): no worker starts clock c before every worker has pushed clock c - s - 1; the gap
  // between the fastest and the slowest worker reaches s exactly when a worker is slowed.
  int staleness_bound = -1;
  // The scheduler switches to this mode after switch_after_ms; with "asp" from bsp, a counter
  // tensor checks that every gradient was applied once, by the rule of its clock.
  std::string switch_to;
  int switch_after_ms = 20;
  // The scheduler moves the range of a random key of the model to another server this many
  // times, migrate_gap_ms apart, while the workers train. Every server then checks that each of
  // its keys applied one gradient per worker and clock (all modes but backup workers).
  int migrations = 0;
  int migrate_gap_ms = 5;
  // Tasks (GradientSync::UseTasks): each worker's minibatch is this many micro-batches, and the
  // slow worker sleeps slow_ms / tasks_per_worker per task it computes. A tensor of one counter
  // per task and clock checks that each was computed once; under epsp, that some moved.
  int tasks_per_worker = 0;
  // STRET's relay: the scheduler orders this many relays on and off (RelayControl),
  // relay_gap_ms apart (the first held 4 gaps), while the workers train. Every server then checks
  // that some pushes carried several workers' gradients. A relay starts at the straggler's next
  // iteration and its partner's first clock not yet pushed, so the first must last a few
  // iterations even on a loaded machine (EPSP's over tasks take about 16 ms here): with all gaps
  // at 10 ms, every relay sometimes ended before it began. Orders that come after the workers
  // finished (a fast machine) are refused, and the rest are not sent.
  int relays = 0;
  int relay_gap_ms = 40;
};

// What the in-process and the multi-process tests both run: softmax regression trained in
// every mode; BSP with a slow worker against a single-process run; SSP(2) with a slow worker;
// a switch from BSP to ASP during training.
struct TrainingCase {
  std::string name;  // a GoogleTest name
  std::string mode;
  TrainingOptions options;
};
std::vector<TrainingCase> TrainingCases();

// |a - b| / |b| over all elements: how far a run's parameters are from a reference's.
double RelativeDistance(const std::vector<float>& a, const std::vector<float>& b);

// `base` with what a TrainingCase needs: its mode, SGD at options.lr, its partition size, a
// small scheduling credit (so priorities matter) and a one-minute timeout.
Config TrainingConfig(Config base, const TrainingCase& c);

// Where each server tells the keys it holds at the end (to check that each has one owner).
using KeyOwners = std::function<void(int server, const std::vector<Key>& keys)>;

// Runs on every rank of a job whose config names the mode (--sync) and `sgd:lr=options.lr` as
// optimizer: servers run a ParameterServer, workers train softmax regression on clustered data
// through GradientSync, the scheduler switches modes or moves key ranges if asked. Checks with
// GoogleTest.
void TrainSoftmax(Session& session, const TrainingOptions& options, const WorkerGather& gather,
                  const KeyOwners& owners = nullptr);

}  // namespace testing
}  // namespace pacer
