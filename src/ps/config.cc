#include "pacer/config.h"

#include <gflags/gflags.h>

#include <cstdlib>
#include <string>

namespace pacer {
namespace {

// Each flag's default comes from its PACER_ environment twin when set, so the precedence is
// command line, then environment, then built-in default.
const char* Env(const char* name) { return std::getenv(name); }

std::string EnvString(const char* name, const char* fallback) {
  const char* v = Env(name);
  return v ? v : fallback;
}
int32_t EnvInt(const char* name, int32_t fallback) {
  const char* v = Env(name);
  return v ? std::stoi(v) : fallback;
}
int64_t EnvInt64(const char* name, int64_t fallback) {
  const char* v = Env(name);
  return v ? std::stoll(v) : fallback;
}
double EnvDouble(const char* name, double fallback) {
  const char* v = Env(name);
  return v ? std::stod(v) : fallback;
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
             pacer::EnvInt64("PACER_MAX_INFLIGHT_BYTES", pacer::kDefaults.max_inflight_bytes),
             "cap on bytes in flight per destination");
DEFINE_int64(rndv_threshold,
             pacer::EnvInt64("PACER_RNDV_THRESHOLD", pacer::kDefaults.rndv_threshold),
             "payloads of at least this many bytes use UCX rendezvous");
DEFINE_int32(spin_us, pacer::EnvInt("PACER_SPIN_US", pacer::kDefaults.spin_us),
             "microseconds the progress thread polls before blocking; -1 chooses");

DEFINE_string(reduce_device, pacer::EnvString("PACER_REDUCE_DEVICE", "cpu"),
              "where sums and optimizer steps run: cpu or cuda");
DEFINE_int32(reduce_threads, pacer::EnvInt("PACER_REDUCE_THREADS", pacer::kDefaults.reduce_threads),
             "CPU threads of one sum or optimizer step; 0 = one per core");

DEFINE_string(sync, pacer::EnvString("PACER_SYNC", "bsp"),
              "synchronization mode: bsp, asp, ssp:S, backup:B, dynsgd, consgd or consgd:C");
DEFINE_string(optimizer, pacer::EnvString("PACER_OPTIMIZER", "sgd:lr=0.01"),
              "servers' update rule: sgd:lr=L,momentum=M,nesterov,wd=W or adam|adamw:lr=L,...");
DEFINE_int64(
    partition_bytes, pacer::EnvInt64("PACER_PARTITION_BYTES", pacer::kDefaults.partition_bytes),
    "GradientSync splits larger tensors into keys of this many bytes, groups smaller ones");
DEFINE_int32(scheduling_credit,
             pacer::EnvInt("PACER_SCHEDULING_CREDIT", pacer::kDefaults.scheduling_credit),
             "GradientSync keys in flight per worker; the rest wait by priority");

namespace pacer {

Config Config::FromFlags() {
  Config c;
  c.servers = FLAGS_servers;
  c.transport = FLAGS_transport;
  c.server_threads = FLAGS_server_threads;
  c.timeout_s = FLAGS_timeout_s;
  c.max_inflight_bytes = FLAGS_max_inflight_bytes;
  c.rndv_threshold = FLAGS_rndv_threshold;
  c.spin_us = FLAGS_spin_us;
  c.reduce_device = FLAGS_reduce_device;
  c.reduce_threads = FLAGS_reduce_threads;
  c.sync = FLAGS_sync;
  c.optimizer = FLAGS_optimizer;
  c.partition_bytes = FLAGS_partition_bytes;
  c.scheduling_credit = FLAGS_scheduling_credit;
  return c;
}

Config Config::ParseCommandLine(int* argc, char*** argv) {
  gflags::ParseCommandLineFlags(argc, argv, /*remove_flags=*/true);
  return FromFlags();
}

}  // namespace pacer
