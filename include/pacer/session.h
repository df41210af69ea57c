#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "pacer/config.h"
#include "pacer/reducer.h"
#include "pacer/types.h"

/// Pacer's public API. Every rank of a job makes a Session; workers train through GradientSync (or
/// push and pull values by key with KVWorker), servers run ParameterServer (or KVServer), and the
/// scheduler may steer the job with SyncControl, MigrationControl and RelayControl. Failures throw
/// Error or one of its subclasses.
namespace pacer {

class Node;  // what a Session is inside (src/ps/node/node.h)

/// One node of a Pacer job. Constructing a Session joins the job: it initializes MPI if the
/// program has not (an existing training code may have), assigns this rank its role (rank 0
/// scheduler, `servers` ranks placed by `server_placement`, the rest workers) and brings the
/// transport up. Every rank constructs its Session at the same point (it is collective). Finalize
/// (or the destructor) waits until every node has finalized, then tears down; requests in flight
/// must be waited for before.
class Session {
 public:
  /// Joins the job with `config`. Throws Error naming the flag for a value its row refuses, or
  /// for a job-wide option on which this rank and the others differ.
  explicit Session(const Config& config);
  /// A session over a node that Pacer's own code joined another way (its tests run every rank of
  /// a job as a thread of one process); not for applications.
  explicit Session(std::unique_ptr<Node> node);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// This rank's role: rank 0 is the scheduler, `servers` ranks the servers (ranks 1..servers on
  /// one host or with `--server_placement=pack`, one per host in turn with `spread`), the rest
  /// workers.
  Role role() const;
  /// Whether this rank is the scheduler (rank 0).
  bool is_scheduler() const { return role() == Role::kScheduler; }
  /// Whether this rank is a server.
  bool is_server() const { return role() == Role::kServer; }
  /// Whether this rank is a worker.
  bool is_worker() const { return role() == Role::kWorker; }
  /// This node's rank in the job (its MPI rank where MPI launched the job).
  int rank() const;
  /// The job's server count (`--servers`).
  int num_servers() const;
  /// The job's worker count: every rank that is neither the scheduler nor a server.
  int num_workers() const;
  /// Index of this node within its role: 0..num_workers-1 on workers, 0..num_servers-1 on servers.
  int role_index() const;
  /// The workers (role indices) the job went on without: lost, where the sync mode could spare
  /// them (`--on_worker_loss`). Collectives of the caller's own over the workers must leave them
  /// out, and MPI_Finalize, which would wait for them, must not be called.
  std::vector<int> excluded_workers() const;
  /// "ucx" or "mpi".
  std::string transport_name() const;
  /// The configuration this rank runs with: the one given, with the values a row leaves to Pacer
  /// (`reduce_threads` 0, `spin_us` -1) settled for this host.
  const Config& config() const;
  /// Sums and optimizer steps on config().reduce_device, shared by this rank's servers and workers
  /// (and free for the caller's own local aggregation).
  Reducer& reducer();

  /// `bytes` of memory (64-byte aligned) to push values from. Where this rank reaches servers on
  /// its host through shared memory (UCX with shared memory), the memory is taken from its ring
  /// (`--shm_ring_bytes`; all of it that the ring can spare) and those servers sum pushed values
  /// where they lie, without the copy a push otherwise makes; elsewhere, or when the ring has no
  /// room left, it is ordinary memory. Freed when the last copy of the pointer goes. As for
  /// any ZPush, values must stay unchanged until the push's Wait returns.
  std::shared_ptr<void> AllocatePushMemory(size_t bytes);

  /// Blocks until every node of `group` (NodeGroup bits) has called Barrier with the same group.
  /// Throws TimeoutError after config().timeout_s.
  void Barrier(int group);
  /// Barrier(group), throwing TimeoutError after `timeout` instead.
  void Barrier(int group, std::chrono::milliseconds timeout);

  /// The server index (0..num_servers-1) that owns `key` in the current placement.
  int ServerOfKey(Key key) const;

  /// Waits for all nodes, then stops the transport and, if Session initialized MPI, finalizes it.
  /// Servers and the scheduler typically call it right away and serve until the workers finish.
  void Finalize();

 private:
  friend inline Node& NodeOf(Session& session);
  friend inline const Node& NodeOf(const Session& session);

  std::unique_ptr<Node> node_;
};

}  // namespace pacer
