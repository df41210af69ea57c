#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/compute_trace.h"
#include "common/job_variation.h"

namespace pacer {

// One --inject=SPEC: a slowdown of a node or a link, and when it applies. Off unless given.
//
//   SPEC      := TARGET ':' EFFECT [ '@' SCHEDULE ]
//   TARGET    := worker:N | worker:* | server:N | server:* | link:END->END
//   END       := a rank | * | wN (worker N) | sN (server N)
//   EFFECT    := compute=Mx (workers: sleep (M-1) x the measured compute time)
//              | service=Mx (servers: delay each request by (M-1) x its service time)
//              | rate=RATE (servers: an emulated capacity; a request occupies the server for
//                its bytes of work / RATE, after the one before it; with service=Mx, RATE / M)
//              | bw=RATE (links: a token bucket; RATE like 100MB/s, 1.5GB/s, 800KiB/s)
//              | delay=TIME (links: added to every message; TIME like 2ms, 150us, 1s)
//   or        trace:PATH[:from=N][:scale=F][:to=fastest|median][:workers=A+B+...] (every
//              worker, always: worker i's compute follows worker i mod W of the recorded trace at
//              PATH (ComputeTrace), or the (i mod count)th of the trace workers listed, at the
//              trace's iteration N + the clock, slowed to F x its ratio to the trace's fastest
//              worker there, or with to=median to F x its ratio to the median of the whole trace
//              (pacer-scenario's default); F defaults to 1, N to 0)
//   or        spread:PATH:job=K[:from=N] (every worker, always: each worker's compute in each
//              iteration is drawn from a lognormal of mean 1 x the compute and job K's
//              coefficient of variation at the iteration N + the clock (JobVariation), seeded by
//              --inject_seed, the worker and the iteration)
//   SCHEDULE  := p=P (each iteration independently, with probability P)
//              | period=B:A (the last A iterations of every B)
//              | window=START:LENGTH (from START for LENGTH, in time since the job began)
//   no SCHEDULE: always.
//
// Workers and servers are named by role index (worker:0 is the first worker); link ends by MPI
// rank, or by role index with w/s. Examples: worker:3:compute=3x, worker:*:compute=3x@p=0.1,
// worker:2:compute=3x@period=200:50, link:4->1:bw=100MB/s, link:w0->*:delay=2ms,
// server:1:service=3x@window=60s:60s, server:*:rate=400MB/s.
struct FaultSpec {
  enum class Target { kWorker, kServer, kLink };
  enum class Effect { kCompute, kService, kBandwidth, kDelay, kRate };
  enum class Schedule { kAlways, kProbability, kPeriod, kWindow };
  // An end of a link, or a node: kAny matches every one.
  struct Node {
    enum class By { kAny, kRank, kWorker, kServer } by = By::kAny;
    int number = 0;
  };

  Target target = Target::kWorker;
  Node node;      // workers and servers (by role index)
  Node from, to;  // links
  Effect effect = Effect::kCompute;
  double value = 1;  // the multiplier, bytes per second (bw, rate), or seconds of delay
  Schedule schedule = Schedule::kAlways;
  double probability = 0;
  int64_t period = 0, slow = 0;  // kPeriod: the last `slow` of every `period` iterations
  double window_start_s = 0, window_length_s = 0;
  std::shared_ptr<const ComputeTrace> trace;      // a trace: replaces `value`, per worker and clock
  std::shared_ptr<const JobVariation> variation;  // a spread: replaces `value`, drawn
  int64_t trace_from = 0;                         // both: where the replay starts
  double trace_scale = 1;
  bool trace_to_median = false;
  std::vector<int> trace_workers;  // the trace workers replayed, in turn; empty: all

  // Throws pacer::Error naming the part of `text` that is wrong.
  static FaultSpec Parse(const std::string& text);

  // Whether this spec slows worker (or server) `index` of `role`.
  bool Names(Target role, int index) const;
  // Whether the fault applies to the node's `iteration` at `time_s` after the job began. The
  // probability schedule draws from (seed, node, iteration) alone, so a run is reproducible.
  bool ActiveAt(int64_t iteration, double time_s, int node, uint64_t seed) const;
  // The multiplier for node `index` at `iteration`: `value`, a trace's ratio there, or a spread's
  // draw from (seed, index, iteration).
  double MultiplierAt(int index, int64_t iteration, uint64_t seed) const;
};

// The product of the multipliers of the `effect` specs that name node `index` of `role` and apply
// at (iteration, time_s): 1 when none does.
double ActiveMultiplier(const std::vector<FaultSpec>& faults, FaultSpec::Target role,
                        FaultSpec::Effect effect, int index, int64_t iteration, double time_s,
                        uint64_t seed);

// A RATE as the specs write it (100MB/s, 1.5GB/s, 800KiB/s) in bytes per second. Throws
// std::invalid_argument for text that is not a positive rate.
double ParseRate(const std::string& text);

// The lowest RATE of the rate specs that name server `index` and apply at `time_s`, divided by
// the active service multipliers; 0 when no rate spec applies (the server runs at its own speed).
double ActiveServiceRate(const std::vector<FaultSpec>& faults, int index, double time_s,
                         uint64_t seed);

}  // namespace pacer
