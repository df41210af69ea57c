#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "straggler/predictor.h"

namespace pacer {
namespace straggler {

struct SmsOptions {
  // A worker is shrunk when its compute predicted at the full batch is more than (1 + margin) x
  // the median worker's, and at least floor_s more.
  double margin = 0.5;
  double floor_s = 0.003;
  // Iterations between the boundary where a decision is made and the first iteration it can act
  // on: an order sent at boundary i reaches a worker already in iteration i + 1 and holds from
  // its next one.
  int lookahead = 2;
  // A shrunk worker's size changes only when b' moves more than this fraction away from it, so
  // that noise on the prediction does not send an order every iteration.
  double resize_fraction = 0.2;
  // The size ordered is the largest allowed one within this fraction above b', so that a
  // measurement a little high does not cost a whole size.
  double size_tolerance = 0.05;
  PredictorOptions predictor;
};

// An order for one worker: run batches of `batch` samples, their gradients weighted `weight`
// (batch / the full batch: the update stays the mean over the samples computed).
struct SmsShrink {
  int worker = 0;
  int batch = 0;
  double weight = 1;
  double predicted_s = 0;  // its compute predicted at the full batch
  double median_s = 0;     // the median worker's
  // Send gradients little changed since the last ones as "same as last" (SMS's skip): a worker
  // shrunk, or one on a slow link (`slow_link`: the detector's communication straggler).
  bool skip = false;
  bool slow_link = false;
};

// SMS's decisions on predicted stragglers (STRAGGLERS.md section 5): per worker, a predictor of
// its compute time at the full batch (the measured compute scaled by full / run, so that a shrink
// does not hide the slow phase from the model; the median of its last 3, so that a lone stall is
// not a straggler), and at each boundary, for each worker whose
// prediction `lookahead` iterations ahead marks it a straggler, the target batch
// b' = B x t_median / t_predicted rounded down to a size it allows (within size_tolerance) (the
// smallest one if none is that small). A worker predicted and measured fast again goes back to B.
// Pure logic: the scheduler and the simulator feed it.
class SmsPolicy {
 public:
  explicit SmsPolicy(const SmsOptions& options = {});

  // The sizes worker `worker` can run; the largest is its full batch B. Workers that never tell
  // are never shrunk. Throws std::invalid_argument for an empty list or a size that is not
  // positive.
  void Allow(int worker, std::vector<int> sizes);
  // Worker `worker` computed `batch` samples in `compute_s` seconds.
  void Observe(int worker, double compute_s, int batch);
  // The workers on slow links as the detector judges them now (communication stragglers, from
  // real traffic with its own hysteresis): they skip, at their full batch unless shrunk.
  void SetSlowLinks(std::set<int> workers) { slow_links_ = std::move(workers); }
  // The orders that change a worker's batch or skip, in worker order.
  std::vector<SmsShrink> Decide();
  // The job went on without worker `worker` (lost): it gets no order and leaves the median.
  void Forget(int worker) { workers_.erase(worker); }
  // The size worker `worker` runs as last ordered (its full batch before any order, 0 if unknown).
  int BatchOf(int worker) const;
  // Whether worker `worker` skips unchanged gradients as last ordered.
  bool SkipsOf(int worker) const;

 private:
  struct Worker {
    std::vector<int> sizes;                     // ascending
    std::deque<std::pair<double, int>> recent;  // the last 3 computes and their batches
    double measured_s = 0;  // their median scaled to the full batch: what the predictor last saw
    double at_size_s = 0;   // their median as measured, where all 3 ran one size (else 0)
    int at_size_batch = 0;  // that size (else 0)
    double shrunk_s = 0;    // at_size_s when first known at the size last ordered (else 0)
    std::unique_ptr<Predictor> predictor;
    int ordered = 0;     // the size it runs as last ordered: its full batch until an order
    bool skips = false;  // as last ordered
  };
  int Target(const Worker& w, double predicted_s, double median_s) const;
  // Whether `seconds` of compute at the full batch make a straggler beside the median's.
  bool Slow(double seconds, double median_s) const;

  SmsOptions options_;
  std::map<int, Worker> workers_;
  std::set<int> slow_links_;
};

}  // namespace straggler
}  // namespace pacer
