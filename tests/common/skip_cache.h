#pragma once

#include <atomic>
#include <cstdint>

#include "pacer/parameter_server.h"
#include "pacer/session.h"

namespace pacer {
namespace testing {

// A server of an SMS skip test, in step with the workers' barriers: ordered to skip, trained
// skipping, then one more iteration not skipping. Adds the bytes it keeps for skipping workers
// after the training to cached[0], after the last iteration to cached[1].
inline void ServeCountingSkipCache(Session& session, std::atomic<int64_t> cached[2]) {
  ParameterServer server(session);
  auto kept = [&server] {
    int64_t bytes = 0;
    for (const auto& [key, stats] : server.Keys()) bytes += stats.skip_cache_bytes;
    return bytes;
  };
  session.Barrier(kAllNodes);  // ordered
  session.Barrier(kAllNodes);  // trained, skipping
  cached[0] += kept();
  session.Barrier(kAllNodes);
  session.Barrier(kAllNodes);  // one more iteration, not skipping
  cached[1] += kept();
}

}  // namespace testing
}  // namespace pacer
