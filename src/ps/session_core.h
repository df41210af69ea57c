#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "pacer/config.h"
#include "pacer/reducer.h"
#include "pacer/types.h"
#include "ps/message.h"
#include "ps/routing.h"
#include "ps/telemetry.h"
#include "ps/transport/transport.h"
#include "straggler/fault_spec.h"

namespace pacer {

// What a Session is inside: the transport, this node's role, key placement, and the dispatch of
// incoming messages to the KVServer (requests), the KVWorkers (responses) and the barrier logic.
// Requests that reach a server before its KVServer exists wait in a queue and are handed over when
// it attaches, so a worker's first push can never race a server's start-up.
class SessionCore {
 public:
  using Sink = std::function<void(Message&&)>;
  using Placer = Transport::PayloadPlacer;
  using Consumers = Transport::PayloadConsumerFactory;

  // Joins a job over MPI: initializes MPI when needed and picks the transport.
  static std::unique_ptr<SessionCore> CreateWithMpi(const Config& config);

  // Runs over a given transport (tests: LocalTransport). `finalize_mpi`: call MPI_Finalize at the
  // end because this session initialized MPI. `ranks_fit_cores`: this host's servers and workers
  // have a core each.
  SessionCore(const Config& config, std::unique_ptr<Transport> transport, bool finalize_mpi,
              bool ranks_fit_cores = false);
  ~SessionCore();

  const Config& config() const { return config_; }
  Transport& transport() { return *transport_; }
  // The routing table this node knows (a snapshot: tables are replaced, never changed).
  std::shared_ptr<const Router> routing() const;
  // Replaces the table when `table` is newer (a higher epoch); returns whether it did.
  bool InstallRouting(const Router& table);
  // The scheduler's controls (mode switches, migrations) run one at a time under this lock: a key
  // moved during a switch would reach a server that has not seen it.
  std::mutex& control_mutex() { return control_mu_; }
  // The sums and optimizer steps of this rank's servers and workers, made on first use from
  // config().reduce_device and reduce_threads; throws Error on an unknown device.
  Reducer& reducer();
  Role role() const { return role_; }
  // Whether this host's servers and workers have a core each (threads are then rarely preempted).
  bool ranks_fit_cores() const { return ranks_fit_cores_; }
  int rank() const { return rank_; }
  int num_servers() const { return config_.servers; }
  int num_workers() const { return size_ - 1 - config_.servers; }
  std::string transport_name() const { return transport_name_; }
  int role_index() const;
  static int ServerRank(int server_index) { return 1 + server_index; }
  Role RoleOf(int rank) const;
  // --inject, parsed (bad specs are rejected when the session starts).
  const std::vector<straggler::FaultSpec>& faults() const { return faults_; }
  // --server_bandwidth, parsed: bytes per second per server index, 0 where unknown.
  const std::vector<double>& server_bandwidth() const { return server_bandwidth_; }
  // Seconds since this session started: the time axis of injection windows and metrics.
  double SecondsSinceStart() const;

  // The sink receives every request for `app_id`, starting with those that arrived before;
  // `consumers`, if set, may take a request's values as they arrive (Transport's streams).
  void AttachServer(int app_id, Sink sink, Consumers consumers = nullptr);
  void DetachServer(int app_id);
  // Returns the client id that responses carry back to `sink`; `placer`, if set, may choose where
  // the values of a large response land.
  int AttachClient(Sink sink, Placer placer = nullptr);
  void DetachClient(int client_id);

  // Workers and servers: sends a report to the scheduler (asynchronously; a failure is logged).
  void Report(const IterationReport& report);
  void Report(const ServerReport& report);
  // The scheduler: where reports go, with the sender's rank (on the transport's thread).
  using ReportSink = std::function<void(int rank, const IterationReport&)>;
  using ServerReportSink = std::function<void(int rank, const ServerReport&)>;
  void SetReportSinks(ReportSink workers, ServerReportSink servers);
  // The scheduler's task authority (Falcon) receives the workers' TASK requests, on the
  // receiving thread, starting with those that came before it; other ranks refuse them.
  void SetTaskSink(Sink sink);

  // Replies to `request` with an error naming this rank; logs it too.
  void RejectRequest(const proto::Meta& request, const std::string& error);
  // Replies to `request` that this server does not own its keys, with this node's routing table;
  // `pushed`: its push was applied, only the pull is to be resent.
  void RedirectRequest(const proto::Meta& request, bool pushed);
  // A response's header: to the sender of `request`, for its client, request and part.
  Message ReplyTo(const proto::Meta& request) const;

  // Runs `hook` in Finalize, after the last barrier and before the transport stops (the
  // scheduler's Monitor ends its moves there); nullptr removes it.
  void SetFinalizeHook(std::function<void()> hook);

  // Waits without deadline when `timeout` is empty.
  void Barrier(int group, std::optional<std::chrono::milliseconds> timeout);
  void Finalize();

 private:
  void Dispatch(Message&& msg);
  uint8_t* PlacePayload(const DecodedHeader& header);
  std::shared_ptr<PayloadConsumer> ConsumePayload(const Message& msg);
  void HandleBarrierRequest(const Message& msg);
  void HandleReport(const Message& msg);
  void HandleRoutingUpdate(Message&& msg);
  int GroupSize(int group) const;
  void SendOrLog(int dst, const Message& msg);

  Config config_;
  std::vector<straggler::FaultSpec> faults_;
  std::vector<double> server_bandwidth_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::unique_ptr<Transport> transport_;
  std::once_flag reducer_once_;
  std::unique_ptr<Reducer> reducer_;
  mutable std::mutex routing_mu_;
  std::mutex control_mu_;
  std::shared_ptr<const Router> routing_;
  int rank_;
  int size_;
  std::string transport_name_;
  Role role_;
  bool finalize_mpi_;
  const bool ranks_fit_cores_;
  bool finalized_ = false;
  std::mutex finalize_mu_;
  std::function<void()> finalize_hook_;
  std::mutex report_mu_;
  bool transport_stopped_ = false;  // reports are dropped from then on

  std::mutex sinks_mu_;
  ReportSink report_sink_;
  ServerReportSink server_report_sink_;
  Sink task_sink_;
  std::vector<Message> early_tasks_;  // TASK requests that came before the task sink
  std::map<int, Sink> servers_;
  std::map<int, Consumers> server_consumers_;
  std::map<int, std::vector<Message>> early_requests_;
  std::set<int> detached_servers_;
  std::map<int, Sink> clients_;
  std::map<int, Placer> placers_;
  int next_client_id_ = 0;

  // Barriers: on every node, how many barriers of each group were entered and released; on the
  // scheduler, which ranks have arrived at each group's current barrier.
  std::mutex barrier_mu_;
  std::condition_variable barrier_cv_;
  std::map<int, int64_t> barriers_entered_;
  std::map<int, int64_t> barriers_released_;
  std::map<int, std::vector<int>> barrier_arrivals_;
};

}  // namespace pacer
