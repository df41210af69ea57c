#pragma once

#include <pacer/session.h>

#include <vector>

namespace pacer {
namespace bench {

// Keys for one benchmark point: for every worker and window slot, one key on each server, so a
// push of S bytes per server carries S bytes to every server and no two workers share a key.
// Every worker computes the same table (placement is deterministic).
class BenchKeys {
 public:
  BenchKeys(const Session& session, int point, int window);
  // Sorted keys of `slot` for `worker`, one per server.
  const std::vector<Key>& of(int worker, int slot) const { return keys_[worker][slot]; }
  // One key per server that every worker pushes to (for the sum-over-workers check).
  const std::vector<Key>& shared() const { return shared_; }

 private:
  std::vector<std::vector<std::vector<Key>>> keys_;  // [worker][slot] -> keys
  std::vector<Key> shared_;
};

}  // namespace bench
}  // namespace pacer
