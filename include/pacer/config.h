#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pacer/transport_tuning.h"

namespace pacer {

// Everything a job can set. Each field is also a command-line flag (--name) with an environment
// twin (PACER_NAME, upper case); the flag wins over the environment, the environment over the
// default. Code that embeds Pacer can fill a Config directly.
struct Config {
  // --servers: ranks 1..servers are servers, rank 0 the scheduler, the rest workers.
  int servers = 1;
  // --transport: "ucx", "mpi", or "auto" (UCX where it initializes, else MPI).
  std::string transport = "auto";
  // --server_threads: request-handling threads per server; 0 picks min(4, cores).
  int server_threads = 0;
  // --timeout_s: how long Wait, Barrier and a blocked request may take before TimeoutError.
  double timeout_s = 120;
  // --reduce_device: where sums and optimizer steps run, "cpu" or "cuda" (the CPU, with one log
  // line, where no CUDA device is usable).
  std::string reduce_device = "cpu";
  // --reduce_threads: CPU threads of one sum or step; 0 = this rank's share of the host's cores
  // (cores / servers and workers on the host, at least 1).
  int reduce_threads = 0;
  // --sync: how servers combine gradients (SyncMode): bsp, asp, ssp:S, backup:B, dynsgd, consgd,
  // epsp:S.
  std::string sync = "bsp";
  // --optimizer: the servers' update rule (sgd:lr=..,momentum=..,nesterov,wd=.. or adam/adamw).
  std::string optimizer = "sgd:lr=0.01";
  // --partition_bytes: GradientSync splits larger tensors into keys of at most this many bytes
  // and groups smaller neighbours up to it.
  int64_t partition_bytes = int64_t{1} << 20;
  // --scheduling_credit: GradientSync's keys in flight per worker; the rest wait by priority.
  int scheduling_credit = 8;
  // --inject: fault injection, off when empty. Repeatable; PACER_INJECT separates specs with ';'.
  // The grammar is in src/common/fault_spec.h (e.g. worker:3:compute=3x@p=0.1).
  std::vector<std::string> inject;
  // --inject_seed: seed of the probabilistic injection schedules.
  int64_t inject_seed = 1;
  // --metrics: the scheduler writes JSON lines here: one record per worker iteration, one per
  // detection or decision. Off when empty.
  std::string metrics;
  // The straggler detector's thresholds (STRAGGLERS.md section 1): --straggler_ratio (busy time
  // over the fastest worker's), --compute_ratio and --transfer_ratio (which part is slow),
  // --server_ratio (service time per byte over the median server's), --predicted_margin, and
  // --detect_window (iterations whose median judges a node).
  double straggler_ratio = 2.0;
  double compute_ratio = 1.5;
  double transfer_ratio = 1.5;
  double server_ratio = 1.5;
  double predicted_margin = 0.2;
  int detect_window = 3;
  // --straggler_floor_ms: a node is flagged only when its excess over the fastest worker (the
  // median server's service time, for a server) is also at least this many milliseconds, so
  // noise on sub-millisecond iterations flags nobody.
  double straggler_floor_ms = 3;
  // --predictor_window: the span of the predictor's moving mean.
  int predictor_window = 10;
  // --server_report_ms: how often servers report their service to the scheduler.
  int server_report_ms = 100;
  // --migrate_every: every this many iterations the scheduler moves the key range of a random
  // GradientSync key to another server (for testing migration under load); 0: never.
  int migrate_every = 0;
  // --balance: the scheduler's server load balancing. "sas": move key ranges off servers whose
  // measured service time per byte makes them stragglers (STRAGGLERS.md section 3), and back when
  // they recover; "none" (the default): ranges stay where they start.
  std::string balance = "none";
  // --comm_policy: the scheduler's answer to communication stragglers. "stret": STRET's relay
  // through a partner worker chosen by probed bandwidth (STRAGGLERS.md section 6); "none" (the
  // default): a slow link stays the straggler's.
  std::string comm_policy = "none";
  // --relays_per_partner: under stret, the stragglers one partner may relay for at once.
  int relays_per_partner = 1;
  // --withhold_every, --withhold_threshold: under stret, every this many iterations a straggler
  // no relay helped has its gradients withheld while training gains less than the threshold, in
  // accuracy points per iteration (as the application reports it: GradientSync::ReportAccuracy).
  int withhold_every = 100;
  double withhold_threshold = 0.01;
  // --predicted_policy: the scheduler's answer to predicted compute stragglers. "sms": SMS's batch
  // shrink, a worker whose compute is predicted past (1 + --shrink_margin) x the median worker's
  // runs a smaller batch for as long as the prediction holds, its gradients weighted by the
  // samples (STRAGGLERS.md section 5); "none" (the default): batches stay the application's.
  std::string predicted_policy = "none";
  double shrink_margin = 0.5;
  // --skip_eps: under sms, a straggler sends a tensor's gradient as "same as last" (the server
  // applies the one it sent before) while ||g - g_last|| <= this x ||g_last||.
  double skip_eps = 0.05;
  // --server_bandwidth: servers' known capacity (a NIC's rate, say), as RATE for every server or
  // RATE,RATE,... one per server, like 1.25GB/s. SAS then judges a server by the worse of its
  // measured service rate and this one. Empty: measured only.
  std::string server_bandwidth;
  // --heartbeat_timeout_s: a rank not heard from for this long (frozen, dead, cut off) is
  // declared lost. Ranks send heartbeats on the control channel a few times per timeout.
  double heartbeat_timeout_s = 10;
  // --on_worker_loss: what a lost worker does to a bsp job: "abort" (the default: every rank
  // exits non-zero, naming it) or "continue" (the job goes on over the live workers, each update
  // the mean of theirs). Under every other mode a lost worker is always left behind. Losing
  // worker 0, a server or the scheduler ends the job.
  std::string on_worker_loss = "abort";

  // How messages move: the transport's knobs (flags of their own, as every field here).
  TransportTuning tuning;

  // Reads the flags (after ParseCommandLine) and their PACER_ environment twins.
  static Config FromFlags();
  // Parses argv (gflags), removing the flags it knows, and returns FromFlags().
  static Config ParseCommandLine(int* argc, char*** argv);
};

}  // namespace pacer
