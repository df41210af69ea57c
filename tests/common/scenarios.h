#pragma once

#include <cstdint>

#include "pacer/session.h"

namespace pacer {
namespace testing {

// Job bodies that run on every rank of a job, the same code over every transport: the unit tests
// run them with ranks as threads (LocalTransport), the MPI tests with ranks as processes (UCX,
// MPI). Each checks its results with GoogleTest assertions and finalizes nothing.

struct RoundsOptions {
  int rounds = 10;
  int max_keys = 16;
  int max_len = 1 << 18;  // values per key, log-uniform from 1
  uint64_t seed = 1;
};

// Servers run the default KVServer<T>; workers push random key sets (through Push and ZPush),
// meet at a barrier, and pull the exact sums back (through Pull and ZPull, with lengths), then
// check PushPull on keys without lengths.
template <typename T>
void PushPullRounds(Session& session, const RoundsOptions& options);

// Every kind of bad input from a caller gets an error naming the key, rank and sizes, and the
// servers keep serving.
void CallerErrors(Session& session);

// Requests that bypass KVWorker's checks, and bytes that are no message at all, are rejected; the
// servers lose nothing and keep serving.
void MalformedPeerMessages(Session& session);

// Pulls over several servers whose value lengths change between pulls (a custom handler): values
// received straight into the caller's buffer at offsets guessed from earlier pulls must be moved
// where they belong. Needs two servers or more (returns at once otherwise).
void PullsWithChangingLengths(Session& session);

// Servers create their KVServer late, after workers have already pushed: the early requests wait
// and are served.
void RequestsBeforeServerStarts(Session& session);

// A request for an app no server ever serves waits as an early request for --timeout_s, then is
// rejected naming the app; the server keeps serving the app it has. Run with a short timeout.
void RequestsForAnAppNobodyServes(Session& session);

}  // namespace testing
}  // namespace pacer
