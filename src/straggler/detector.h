#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace pacer {
namespace straggler {

// One worker's iteration, as telemetry reports it. Busy time is compute plus transfer; time
// blocked in synchronization is left out, or under BSP every worker would look as slow as the
// slowest.
struct WorkerIteration {
  int index = 0;  // role index
  int64_t iteration = 0;
  double compute_s = 0;
  double transfer_s = 0;  // pushing and pulling, not waiting for other workers
  // Its gradients went through a relay partner (STRET): its transfer says nothing of its own links,
  // so it is not judged (nor the fastest) until it pushes itself again.
  bool relayed = false;
  // Every push went as "same as last" (SMS's skip): its transfer says nothing new of its links,
  // which are judged by the transfers before.
  bool skipped = false;
  double busy_s() const { return compute_s + transfer_s; }
};

// One server's service over an interval.
struct ServerInterval {
  int index = 0;
  double service_us_per_mb = 0;
};

// The thresholds of STRAGGLERS.md section 1, each a flag of the scheduler.
struct DetectorOptions {
  double worker_ratio = 2.0;      // busy time / fastest worker's
  double compute_ratio = 1.5;     // compute time / fastest worker's: a compute straggler
  double transfer_ratio = 1.5;    // transfer time / fastest worker's: a communication straggler
  double server_ratio = 1.5;      // service time per byte / median server's
  double predicted_margin = 0.2;  // predicted time > (1 + margin) x fastest predicted
  int window = 3;                 // each node is judged by the median of its last `window` values
  // Besides its ratio, a worker's excess (busy or predicted time past the fastest's) must reach
  // this many seconds: noise on sub-millisecond iterations is a large ratio of a tiny time.
  // Servers are judged by rates over intervals of at least a few tens of requests, whose noise
  // the ratio alone absorbs.
  double floor_s = 0.003;
};

struct Detection {
  enum class Kind { kCompute, kCommunication, kBoth, kServer, kPredicted };
  Kind kind;
  int index;     // the worker's or server's role index
  double ratio;  // how far past the fastest (median, for servers) it is
};

const char* KindName(Detection::Kind kind);

// Flags stragglers from telemetry. Pure logic: observations in, detections out. Each node is
// judged by the median of its last few values, so a single slow iteration flags nobody while a
// persistent slowdown is flagged by its second iteration (with the default window of 3).
class Detector {
 public:
  explicit Detector(const DetectorOptions& options = {});

  void Observe(const WorkerIteration& w);
  void Observe(const ServerInterval& s);
  // Drops worker `index`'s history: the job went on without it.
  void Forget(int index) { workers_.erase(index); }
  // Workers whose busy time is past worker_ratio x the fastest, classified by which part is slow,
  // and servers past server_ratio x the median; in index order, workers first.
  std::vector<Detection> Detect() const;
  // Workers whose predicted next busy time is past (1 + predicted_margin) x the fastest
  // prediction (predictions by worker index).
  std::vector<Detection> DetectPredicted(const std::map<int, double>& predicted) const;

 private:
  struct History {
    std::deque<double> busy, compute, transfer;
  };
  void Push(std::deque<double>* values, double v) const;
  bool Judged(const std::deque<double>& values) const;

  DetectorOptions options_;
  std::map<int, History> workers_;
  std::map<int, std::deque<double>> servers_;
};

}  // namespace straggler
}  // namespace pacer
