#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "pacer/types.h"

namespace pacer {

class Node;             // a rank inside a Session (src/ps/node/node.h)
class Session;          // include "pacer/session.h" to make one
class ParameterShards;  // a server's parameters and their synchronization (src/server/)

/// The server side of GradientSync: holds the parameters and optimizer state of the keys this
/// server owns and applies the job's synchronization rule (`--sync`) and optimizer
/// (`--optimizer`) to the workers' gradients. Construct one on every server rank, then call
/// session.Finalize(): it serves until the workers are done.
///
/// ```
///   if (session.is_server()) {
///     pacer::ParameterServer server(session);
///     session.Finalize();
///   }
/// ```
///
/// Each key's first values come from worker 0 (GradientSync::Register), once; pulls of a key wait
/// until it has them. Pushes and pulls carry clocks (see SyncMode); a pull waits at the server
/// until the rule lets its worker start the iteration it asks for. The scheduler may switch the
/// mode at run time (SyncControl).
class ParameterServer {
 public:
  /// On a server: serves the workers' GradientSync of the same `app_id`.
  explicit ParameterServer(Session& session, int app_id = 0);
  ~ParameterServer();
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  /// What happened to one key on this server (those it owns now; a key that moved to another
  /// server took its counts along).
  struct KeyStats {
    int64_t version = 0;  ///< updates applied
    int64_t applied = 0;  ///< gradients that went into an update
    int64_t dropped = 0;  ///< gradients dropped as stale (backup workers)
    int64_t pushes = 0;   ///< pushes received: a relayed one carries several gradients
    /// Bytes kept for workers that skip unchanged gradients (SMS), over the workers.
    int64_t skip_cache_bytes = 0;
  };
  /// Every key this server holds, consistent with the requests handled so far.
  std::map<Key, KeyStats> Keys();

 private:
  // What the Session& constructor does, given the node the session hands this role
  // (src/session/role_construction.cc).
  ParameterServer(Node& node, int app_id);

  std::unique_ptr<ParameterShards> shards_;
};

}  // namespace pacer
