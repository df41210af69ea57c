#include "pacer/config.h"

#include <gflags/gflags.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/config_environment.h"
#include "common/split.h"

namespace pacer {
namespace {

// Each flag's default comes from its PACER_ environment twin when set, so the precedence is
// command line, then environment, then built-in default.
const char* Env(const char* name) { return std::getenv(name); }

std::string& FirstProblem() {
  static std::string problem;
  return problem;
}

std::string EnvString(const char* name, const char* fallback) {
  const char* v = Env(name);
  return v ? v : fallback;
}

// The variable's value as a T, or `fallback` (and a recorded problem) where it is not one.
template <typename T>
T EnvNumber(const char* name, T fallback, T (*parse)(const std::string&, size_t*),
            const char* type) {
  const char* v = Env(name);
  if (!v) return fallback;
  size_t used = 0;
  try {
    const T value = parse(v, &used);
    if (v[used] == '\0') return value;
  } catch (const std::exception&) {
  }
  if (FirstProblem().empty()) {
    FirstProblem() = std::string(name) + "=" + v + ": expected " + type;
  }
  return fallback;
}

int32_t EnvInt(const char* name, int32_t fallback) {
  return EnvNumber<int32_t>(
      name, fallback, [](const std::string& s, size_t* used) { return std::stoi(s, used); },
      "an integer");
}
int64_t EnvInt64(const char* name, int64_t fallback) {
  return EnvNumber<int64_t>(
      name, fallback,
      [](const std::string& s, size_t* used) -> int64_t { return std::stoll(s, used); },
      "an integer");
}
double EnvDouble(const char* name, double fallback) {
  return EnvNumber<double>(
      name, fallback, [](const std::string& s, size_t* used) { return std::stod(s, used); },
      "a number");
}

const Config kDefaults;

}  // namespace
}  // namespace pacer

DEFINE_int32(
    servers, pacer::EnvInt("PACER_SERVERS", pacer::kDefaults.servers),
    "number of server ranks (ranks 1..servers); rank 0 is the scheduler, the rest workers");
DEFINE_string(transport, pacer::EnvString("PACER_TRANSPORT", "auto"),
              "ucx, mpi, or auto (UCX where it initializes, else MPI)");
DEFINE_int32(server_threads, pacer::EnvInt("PACER_SERVER_THREADS", pacer::kDefaults.server_threads),
             "request-handling threads per server; 0 picks min(4, cores)");
DEFINE_double(timeout_s, pacer::EnvDouble("PACER_TIMEOUT_S", pacer::kDefaults.timeout_s),
              "seconds a Wait or Barrier may take before it throws TimeoutError");
DEFINE_int64(max_inflight_bytes,
             pacer::EnvInt64("PACER_MAX_INFLIGHT_BYTES",
                             pacer::kDefaults.tuning.max_inflight_bytes),
             "cap on bytes in flight per destination");
DEFINE_int64(max_message_bytes,
             pacer::EnvInt64("PACER_MAX_MESSAGE_BYTES", pacer::kDefaults.tuning.max_message_bytes),
             "most bytes of values in one message to a server (whole keys); 0 = no limit");
DEFINE_int64(rndv_threshold,
             pacer::EnvInt64("PACER_RNDV_THRESHOLD", pacer::kDefaults.tuning.rndv_threshold),
             "payloads of at least this many bytes use UCX rendezvous");
DEFINE_int64(shm_ring_bytes,
             pacer::EnvInt64("PACER_SHM_RING_BYTES", pacer::kDefaults.tuning.shm_ring_bytes),
             "a worker's shared memory for large payloads to ranks on its host; 0 = off");
DEFINE_int32(read_threads,
             pacer::EnvInt("PACER_READ_THREADS", pacer::kDefaults.tuning.read_threads),
             "threads that copy a large payload out of a server's memory on this host; 0 = off");
DEFINE_int64(stream_piece_bytes,
             pacer::EnvInt64("PACER_STREAM_PIECE_BYTES",
                             pacer::kDefaults.tuning.stream_piece_bytes),
             "a worker's large payloads over TCP go as pieces of this many bytes; -1 = by the "
             "kernel's TCP congestion control, 0 = off");
DEFINE_int32(spin_us, pacer::EnvInt("PACER_SPIN_US", pacer::kDefaults.tuning.spin_us),
             "microseconds the progress thread polls before blocking; -1 chooses");

DEFINE_string(reduce_device, pacer::EnvString("PACER_REDUCE_DEVICE", "cpu"),
              "where sums and optimizer steps run: cpu or cuda");
DEFINE_int32(reduce_threads, pacer::EnvInt("PACER_REDUCE_THREADS", pacer::kDefaults.reduce_threads),
             "CPU threads of one sum or optimizer step; 0 = this rank's share of the cores");

DEFINE_string(
    sync, pacer::EnvString("PACER_SYNC", "bsp"),
    "synchronization mode: bsp, asp, ssp:S, backup:B, dynsgd, consgd, consgd:C or epsp:S");
DEFINE_string(optimizer, pacer::EnvString("PACER_OPTIMIZER", "sgd:lr=0.01"),
              "servers' update rule: sgd:lr=L,momentum=M,nesterov,wd=W or adam|adamw:lr=L,...");
DEFINE_int64(
    partition_bytes, pacer::EnvInt64("PACER_PARTITION_BYTES", pacer::kDefaults.partition_bytes),
    "GradientSync splits larger tensors into keys of this many bytes, groups smaller ones");
DEFINE_int32(scheduling_credit,
             pacer::EnvInt("PACER_SCHEDULING_CREDIT", pacer::kDefaults.scheduling_credit),
             "GradientSync keys in flight per worker; the rest wait by priority");

DEFINE_string(inject, pacer::EnvString("PACER_INJECT", ""),
              "fault injection spec, repeatable (e.g. worker:3:compute=3x@p=0.1); "
              "PACER_INJECT separates several with ';'");
DEFINE_int64(inject_seed, pacer::EnvInt64("PACER_INJECT_SEED", pacer::kDefaults.inject_seed),
             "seed of the probabilistic injection schedules");
DEFINE_string(metrics, pacer::EnvString("PACER_METRICS", ""),
              "the scheduler writes per-iteration records and decisions here as JSON lines");
DEFINE_double(straggler_ratio,
              pacer::EnvDouble("PACER_STRAGGLER_RATIO", pacer::kDefaults.straggler_ratio),
              "a worker straggles past this multiple of the fastest worker's busy time");
DEFINE_double(compute_ratio,
              pacer::EnvDouble("PACER_COMPUTE_RATIO", pacer::kDefaults.compute_ratio),
              "a straggler's compute time past this multiple of the fastest makes it a compute "
              "straggler");
DEFINE_double(transfer_ratio,
              pacer::EnvDouble("PACER_TRANSFER_RATIO", pacer::kDefaults.transfer_ratio),
              "a straggler's transfer time past this multiple of the fastest makes it a "
              "communication straggler");
DEFINE_double(server_ratio, pacer::EnvDouble("PACER_SERVER_RATIO", pacer::kDefaults.server_ratio),
              "a server straggles past this multiple of the median service time per byte");
DEFINE_double(predicted_margin,
              pacer::EnvDouble("PACER_PREDICTED_MARGIN", pacer::kDefaults.predicted_margin),
              "a predicted straggler's next time is past (1 + margin) x the fastest prediction");
DEFINE_int32(detect_window, pacer::EnvInt("PACER_DETECT_WINDOW", pacer::kDefaults.detect_window),
             "iterations whose median judges a node");
DEFINE_int32(predictor_window,
             pacer::EnvInt("PACER_PREDICTOR_WINDOW", pacer::kDefaults.predictor_window),
             "span of the predictor's moving mean");

DEFINE_int32(migrate_every, pacer::EnvInt("PACER_MIGRATE_EVERY", pacer::kDefaults.migrate_every),
             "every this many iterations, move a random key's range to another server; 0: never");

DEFINE_string(balance, pacer::EnvString("PACER_BALANCE", pacer::kDefaults.balance.c_str()),
              "server load balancing: none, or sas (move key ranges off slow servers)");

DEFINE_string(comm_policy,
              pacer::EnvString("PACER_COMM_POLICY", pacer::kDefaults.comm_policy.c_str()),
              "communication stragglers: none, or stret (relay a slow link's gradients through a "
              "partner worker)");

DEFINE_int32(relays_per_partner,
             pacer::EnvInt("PACER_RELAYS_PER_PARTNER", pacer::kDefaults.relays_per_partner),
             "stret: the stragglers one partner may relay for at once");
DEFINE_int32(withhold_every, pacer::EnvInt("PACER_WITHHOLD_EVERY", pacer::kDefaults.withhold_every),
             "stret: iterations between the progress checks that may withhold a straggler");
DEFINE_double(withhold_threshold,
              pacer::EnvDouble("PACER_WITHHOLD_THRESHOLD", pacer::kDefaults.withhold_threshold),
              "stret: accuracy points per iteration below which a straggler is withheld");

DEFINE_string(predicted_policy,
              pacer::EnvString("PACER_PREDICTED_POLICY", pacer::kDefaults.predicted_policy.c_str()),
              "predicted compute stragglers: none, or sms (shrink the batch of a worker predicted "
              "slow, its gradients weighted by the samples)");
DEFINE_double(shrink_margin,
              pacer::EnvDouble("PACER_SHRINK_MARGIN", pacer::kDefaults.shrink_margin),
              "sms: a worker predicted slower than (1 + this) x the median worker is shrunk");
DEFINE_double(skip_eps, pacer::EnvDouble("PACER_SKIP_EPS", pacer::kDefaults.skip_eps),
              "sms: a straggler's gradient within this relative distance of the last one it sent "
              "goes as 'same as last'");

DEFINE_string(server_bandwidth, pacer::EnvString("PACER_SERVER_BANDWIDTH", ""),
              "servers' known capacity for SAS: RATE for all, or RATE,RATE,... one per server");

DEFINE_int32(server_report_ms,
             pacer::EnvInt("PACER_SERVER_REPORT_MS", pacer::kDefaults.server_report_ms),
             "how often servers report their service time, bytes and queue to the scheduler");

DEFINE_double(straggler_floor_ms,
              pacer::EnvDouble("PACER_STRAGGLER_FLOOR_MS", pacer::kDefaults.straggler_floor_ms),
              "a node is flagged only when it is also this many ms past the fastest (the median "
              "server's service time, for servers)");

DEFINE_double(heartbeat_timeout_s,
              pacer::EnvDouble("PACER_HEARTBEAT_TIMEOUT_S", pacer::kDefaults.heartbeat_timeout_s),
              "a rank not heard from for this long is declared lost");

DEFINE_string(on_worker_loss,
              pacer::EnvString("PACER_ON_WORKER_LOSS", pacer::kDefaults.on_worker_loss.c_str()),
              "under bsp, what a lost worker does to the job: abort (every rank exits, naming it) "
              "or continue (the live workers go on, the update weighted over them)");

namespace pacer {
namespace {

// Every --inject on the command line (gflags keeps only the last).
std::vector<std::string> g_injects;

}  // namespace

std::string EnvironmentProblem() { return FirstProblem(); }

Config Config::FromFlags() {
  Config c;
  c.servers = FLAGS_servers;
  c.transport = FLAGS_transport;
  c.server_threads = FLAGS_server_threads;
  c.timeout_s = FLAGS_timeout_s;
  c.tuning.max_inflight_bytes = FLAGS_max_inflight_bytes;
  c.tuning.max_message_bytes = FLAGS_max_message_bytes;
  c.tuning.rndv_threshold = FLAGS_rndv_threshold;
  c.tuning.shm_ring_bytes = FLAGS_shm_ring_bytes;
  c.tuning.read_threads = FLAGS_read_threads;
  c.tuning.stream_piece_bytes = FLAGS_stream_piece_bytes;
  c.tuning.spin_us = FLAGS_spin_us;
  c.reduce_device = FLAGS_reduce_device;
  c.reduce_threads = FLAGS_reduce_threads;
  c.sync = FLAGS_sync;
  c.optimizer = FLAGS_optimizer;
  c.partition_bytes = FLAGS_partition_bytes;
  c.scheduling_credit = FLAGS_scheduling_credit;
  c.inject = !g_injects.empty() ? g_injects : Split(FLAGS_inject, ';');
  c.inject_seed = FLAGS_inject_seed;
  c.metrics = FLAGS_metrics;
  c.straggler_ratio = FLAGS_straggler_ratio;
  c.compute_ratio = FLAGS_compute_ratio;
  c.transfer_ratio = FLAGS_transfer_ratio;
  c.server_ratio = FLAGS_server_ratio;
  c.predicted_margin = FLAGS_predicted_margin;
  c.detect_window = FLAGS_detect_window;
  c.predictor_window = FLAGS_predictor_window;
  c.server_report_ms = FLAGS_server_report_ms;
  c.migrate_every = FLAGS_migrate_every;
  c.balance = FLAGS_balance;
  c.comm_policy = FLAGS_comm_policy;
  c.relays_per_partner = FLAGS_relays_per_partner;
  c.withhold_every = FLAGS_withhold_every;
  c.withhold_threshold = FLAGS_withhold_threshold;
  c.predicted_policy = FLAGS_predicted_policy;
  c.shrink_margin = FLAGS_shrink_margin;
  c.skip_eps = FLAGS_skip_eps;
  c.server_bandwidth = FLAGS_server_bandwidth;
  c.straggler_floor_ms = FLAGS_straggler_floor_ms;
  c.heartbeat_timeout_s = FLAGS_heartbeat_timeout_s;
  c.on_worker_loss = FLAGS_on_worker_loss;
  return c;
}

Config Config::ParseCommandLine(int* argc, char*** argv) {
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = (*argv)[i];
    for (const char* name : {"--inject=", "-inject="}) {
      if (arg.rfind(name, 0) == 0) g_injects.push_back(arg.substr(std::string(name).size()));
    }
    if ((arg == "--inject" || arg == "-inject") && i + 1 < *argc)
      g_injects.push_back((*argv)[i + 1]);
  }
  gflags::ParseCommandLineFlags(argc, argv, /*remove_flags=*/true);
  return FromFlags();
}

}  // namespace pacer
