#include "ps/cluster/roles.h"

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

Roles::Roles(int size, int servers) : size_(size), servers_(servers) {
  if (servers < 1 || size < servers + 2) {
    throw Error(StrCat("a job of ", size, " ranks cannot have ", servers,
                       " servers: it needs 1 scheduler, at least 1 server and at least 1 worker "
                       "(--servers, PACER_SERVERS)"));
  }
}

Role Roles::RoleOf(int rank) const {
  if (rank == 0) return Role::kScheduler;
  return rank <= servers_ ? Role::kServer : Role::kWorker;
}

int Roles::IndexOf(int rank) const {
  switch (RoleOf(rank)) {
    case Role::kScheduler:
      return 0;
    case Role::kServer:
      return rank - 1;
    case Role::kWorker:
      return rank - 1 - servers_;
  }
  return 0;
}

}  // namespace pacer
