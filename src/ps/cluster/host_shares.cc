#include "ps/cluster/host_shares.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace pacer {
namespace {

constexpr int kDefaultSpinUs = 50;
// A server with a core of its own polls through the gaps of a transfer (a rendezvous leaves it
// idle between the request and the data) instead of paying a wake-up per step.
constexpr int kServerSpinUs = 500;

}  // namespace

bool ResolveHostShares(Bootstrap& bootstrap, const Roles& roles, Config& config,
                       std::chrono::milliseconds timeout) {
  const std::vector<std::string>& hosts = bootstrap.Hosts(timeout);
  const int me = bootstrap.rank();
  int busy = 0;
  for (int rank = 0; rank < static_cast<int>(hosts.size()); ++rank) {
    if (roles.RoleOf(rank) != Role::kScheduler && hosts[rank] == hosts[me]) ++busy;
  }
  busy = std::max(1, busy);
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const bool fit = busy <= cores;
  if (config.tuning.spin_us < 0) {
    const bool server = roles.RoleOf(me) == Role::kServer;
    config.tuning.spin_us = !fit ? 0 : server ? kServerSpinUs : kDefaultSpinUs;
  }
  if (config.reduce_threads <= 0) config.reduce_threads = std::max(1, cores / busy);
  return fit;
}

}  // namespace pacer
