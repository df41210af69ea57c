#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
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
  // shrunk, or one whose pushes take longer than the median worker's as the shrink judges
  // compute (a slow link).
  bool skip = false;
  double transfer_s = 0;         // its push of a full gradient, as measured (0: not known)
  double median_transfer_s = 0;  // the median worker's
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
  // Worker `worker` pushed `bytes` of gradients in `push_s` seconds. Only pushes of at least half
  // the most it ever sent measure its link: skipped ones are not, and the decision holds.
  void ObserveTransfer(int worker, double push_s, int64_t bytes);
  // The orders that change a worker's batch or skip, in worker order.
  std::vector<SmsShrink> Decide();
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
    int ordered = 0;           // the size it runs as last ordered: its full batch until an order
    std::deque<double> rates;  // bytes per second of its last 3 measuring pushes
    int64_t full_bytes = 0;    // the most it pushed in an iteration
    bool skips = false;        // as last ordered
  };
  // Each worker's push of its full gradient at its measured rate, where known.
  std::map<int, double> TransferTimes() const;
  int Target(const Worker& w, double predicted_s, double median_s) const;
  // Whether `seconds` of compute at the full batch make a straggler beside the median's.
  bool Slow(double seconds, double median_s) const;

  SmsOptions options_;
  std::map<int, Worker> workers_;
};

}  // namespace straggler
}  // namespace pacer
