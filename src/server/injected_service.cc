#include "server/injected_service.h"

#include <time.h>

#include <algorithm>
#include <thread>

#include "common/fault_spec.h"
#include "ps/node/node.h"

namespace pacer {

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

InjectedService::InjectedService(Node& node)
    : node_(node),
      index_(node.roles().IndexOf(node.rank())),
      any_fault_(!node.settings().faults.empty()) {
  for (const FaultSpec& f : node.settings().faults) {
    if (f.effect == FaultSpec::Effect::kRate && f.Names(FaultSpec::Target::kServer, index_)) {
      emulates_rate_ = true;
    }
  }
}

InjectedService::Delay InjectedService::Apply(size_t bytes, double cpu_seconds_per_byte) {
  Delay delay;
  if (!any_fault_) return delay;
  const double now_s = node_.cluster().SecondsSinceStart();
  const uint64_t seed = static_cast<uint64_t>(node_.config().inject_seed);
  const double rate = ActiveServiceRate(node_.settings().faults, index_, now_s, seed);
  if (rate > 0) {
    delay.emulated_s = static_cast<double>(bytes) / rate;
    const auto occupancy = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(delay.emulated_s));
    std::chrono::steady_clock::time_point finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_at_ = std::max(free_at_, std::chrono::steady_clock::now()) + occupancy;
      finish = free_at_;
    }
    std::this_thread::sleep_until(finish);
    return delay;
  }
  const double multiplier = ActiveMultiplier(node_.settings().faults, FaultSpec::Target::kServer,
                                             FaultSpec::Effect::kService, index_, 0, now_s, seed);
  if (multiplier > 1 && cpu_seconds_per_byte > 0) {
    const double start = ThreadCpuSeconds();
    const double extra = (multiplier - 1) * cpu_seconds_per_byte * static_cast<double>(bytes);
    while (ThreadCpuSeconds() - start < extra) {
    }
    delay.spun = true;
  }
  return delay;
}

}  // namespace pacer
