#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "pacer/config.h"
#include "pacer/reducer.h"
#include "ps/bootstrap/bootstrap.h"
#include "ps/cluster/cluster.h"
#include "ps/cluster/dispatcher.h"
#include "ps/messages/telemetry.h"
#include "ps/node/job_settings.h"
#include "ps/routing/routing_table.h"
#include "ps/transport/transport.h"

namespace pacer {

// A part a node runs beside its own services (the scheduler's telemetry, detection and task
// grants): it stops before the transport does and goes before the node's services.
class NodePart {
 public:
  virtual ~NodePart() = default;
  // Called once the job's last barrier passed, before the transport stops: end whatever waits
  // for other nodes.
  virtual void Stop() {}
};

// One rank of a job, inside a Session: its checked configuration, its membership in the job
// (Cluster), the dispatch of what it receives, its routing table and its Reducer. Servers,
// workers and the scheduler's parts are built over it.
class Node {
 public:
  // Opens this rank's transport once the node knows its role and host share.
  using TransportOpener =
      std::function<std::unique_ptr<Transport>(Bootstrap&, const Config&, Role)>;

  // Joins a job through `bootstrap`: checks the configuration (before any message is sent),
  // settles the defaults that depend on the host's cores, opens the transport with `open` (shaped
  // where --inject shapes links) and starts receiving. Collective: every rank joins.
  static std::unique_ptr<Node> Join(const Config& config, std::unique_ptr<Bootstrap> bootstrap,
                                    const TransportOpener& open);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const Config& config() const { return config_; }
  const JobSettings& settings() const { return settings_; }
  const Roles& roles() const { return cluster_.roles(); }
  int rank() const { return cluster_.rank(); }
  Role role() const { return cluster_.role(); }
  Cluster& cluster() { return cluster_; }
  const Cluster& cluster() const { return cluster_; }
  Dispatcher& dispatcher() { return dispatcher_; }
  RoutingTable& routing() { return routing_; }
  Transport& transport() { return cluster_.transport(); }
  // The sums and optimizer steps of this rank's servers and workers, made on first use from
  // config().reduce_device and reduce_threads; throws Error on an unknown device.
  Reducer& reducer();
  // The scheduler's controls (mode switches, migrations) run one at a time under this lock: a key
  // moved during a switch would reach a server that has not seen it.
  std::mutex& control_mutex() { return control_mu_; }

  // Sends a report to the scheduler, asynchronously; dropped once the transport stopped.
  void Report(const IterationReport& report);
  void Report(const ServerReport& report);

  // Runs `part` beside the node until it finalizes.
  void Adopt(std::unique_ptr<NodePart> part);

  // Waits for every node, stops the parts, then leaves the job (see Cluster::Close). Servers and
  // the scheduler wait here for as long as the workers train and every rank is alive; a lost
  // rank ends the wait with LostRankError (the node still leaves).
  void Finalize();

 private:
  Node(const Config& config, JobSettings settings, const Roles& roles,
       std::unique_ptr<Bootstrap> bootstrap, std::unique_ptr<Transport> transport,
       bool ranks_fit_cores);

  const Config config_;
  const JobSettings settings_;
  Dispatcher dispatcher_;  // before the cluster: the transport delivers into it until it stops
  Cluster cluster_;
  RoutingTable routing_;
  std::once_flag reducer_once_;
  std::unique_ptr<Reducer> reducer_;
  std::mutex control_mu_;
  std::mutex parts_mu_;
  std::vector<std::unique_ptr<NodePart>> parts_;  // last: they go first
  bool finalized_ = false;
};

}  // namespace pacer
