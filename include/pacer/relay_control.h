#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace pacer {

class Node;         // a rank inside a Session (src/ps/node/node.h)
class Session;      // include "pacer/session.h" to make one
class RelayOrders;  // the scheduler's side of the orders (src/scheduler/)

/// The scheduler's handle on STRET's relays (STRAGGLERS.md section 6): a straggler whose links to
/// the servers are slow sends its gradients to a partner worker, which adds them to its own,
/// pushes once for both and forwards the parameters it pulls. Turning a relay on or off loses
/// nothing and doubles nothing: the two agree on the first clock relayed, and the servers count
/// each worker a relayed push carries. The orders reach the workers' GradientSync of app 0.
class RelayControl {
 public:
  /// On the scheduler.
  explicit RelayControl(Session& session);
  ~RelayControl();
  RelayControl(const RelayControl&) = delete;
  RelayControl& operator=(const RelayControl&) = delete;

  /// Worker `straggler` (role indices, as workers are numbered) sends its gradients through worker
  /// `partner` from its next iteration on, or to the servers again with partner -1. Returns once
  /// the straggler has taken the order. Throws Error naming the worker for an index outside the
  /// job or a partner that is the straggler itself, TimeoutError after timeout_s.
  void Relay(int straggler, int partner);

  /// Worker `worker` probes its link to each other worker at the start of its next iteration,
  /// `bytes` each way, and the answer is each link's round-trip bytes per second, by worker index
  /// (0 for itself and for a probe that did not come back within a few seconds). Throws Error
  /// naming the worker for an index outside the job or a size past 16 MiB, TimeoutError after
  /// timeout_s.
  std::vector<double> Probe(int worker, int64_t bytes);

  /// Worker `worker` withholds its gradients from its next iteration on (STRET's WITHHOLD: its
  /// pushes carry weight 0, so updates average over the others, and it still pulls), or sends
  /// them again with `withhold` false. Ends a relay of its own. Throws as Relay does.
  void Withhold(int worker, bool withhold);

  /// What Relay refuses, checked without a job (a flag, before its Session starts): throws Error
  /// naming the worker.
  static void Check(int straggler, int partner, int num_workers);

 private:
  // What the Session& constructor does, given the node the session hands this role
  // (src/session/role_construction.cc).
  explicit RelayControl(Node& node);

  std::unique_ptr<RelayOrders> orders_;
};

}  // namespace pacer
