#include "ps/cluster/roles.h"

#include <map>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

void CheckCounts(int size, int servers) {
  if (servers < 1 || size < servers + 2) {
    throw Error(StrCat("a job of ", size, " ranks cannot have ", servers,
                       " servers: it needs 1 scheduler, at least 1 server and at least 1 worker "
                       "(--servers, PACER_SERVERS)"));
  }
}

}  // namespace

Roles::Placement Roles::PlacementNamed(const std::string& name) {
  if (name == "spread") return Placement::kSpread;
  if (name == "pack") return Placement::kPack;
  throw Error(StrCat("--server_placement=", name, ": expected spread or pack"));
}

Roles::Roles(int size, int servers) {
  CheckCounts(size, servers);
  std::vector<bool> serves(size, false);
  for (int rank = 1; rank <= servers; ++rank) serves[rank] = true;
  Assign(serves);
}

Roles::Roles(const std::vector<std::string>& hosts, int servers, Placement placement) {
  const int size = static_cast<int>(hosts.size());
  CheckCounts(size, servers);
  std::vector<bool> serves(size, false);
  if (placement == Placement::kPack) {
    for (int rank = 1; rank <= servers; ++rank) serves[rank] = true;
    Assign(serves);
    return;
  }
  // Each host's ranks past the scheduler, the hosts in the order of their lowest such rank.
  std::map<std::string, size_t> host_number;
  std::vector<std::vector<int>> ranks_of_host;
  for (int rank = 1; rank < size; ++rank) {
    auto [it, added] = host_number.emplace(hosts[rank], ranks_of_host.size());
    if (added) ranks_of_host.emplace_back();
    ranks_of_host[it->second].push_back(rank);
  }
  // Round after round, the next free rank of each host in turn; a host whose ranks are all taken
  // is passed over, and a worker is always left (CheckCounts).
  int chosen = 0;
  for (size_t round = 0; chosen < servers; ++round) {
    for (const std::vector<int>& ranks : ranks_of_host) {
      if (chosen == servers) break;
      if (round < ranks.size()) {
        serves[ranks[round]] = true;
        ++chosen;
      }
    }
  }
  Assign(serves);
}

void Roles::Assign(const std::vector<bool>& serves) {
  const int size = static_cast<int>(serves.size());
  role_.assign(size, Role::kScheduler);
  index_.assign(size, 0);
  for (int rank = 1; rank < size; ++rank) {
    std::vector<int>& ranks = serves[rank] ? server_ranks_ : worker_ranks_;
    role_[rank] = serves[rank] ? Role::kServer : Role::kWorker;
    index_[rank] = static_cast<int>(ranks.size());
    ranks.push_back(rank);
  }
}

}  // namespace pacer
