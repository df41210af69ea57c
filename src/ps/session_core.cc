#include "ps/session_core.h"

#include <glog/logging.h>
#include <mpi.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "pacer/error.h"
#include "ps/transport/mpi_transport.h"
#include "ps/transport/shaped_transport.h"
#include "ps/transport/ucx_transport.h"

namespace pacer {
namespace {

constexpr int kDefaultSpinUs = 50;
// A server rank exists to answer: when it has a core of its own, it polls through the gaps of a
// transfer (a 1 MiB rendezvous leaves it idle for 50-100 us between the request and the data)
// instead of sleeping and paying a wake-up per step. 1 and 16 MiB pushes, window 8, server 500 us
// against 50 (6 runs against 3): 8.0-11.7 against 5.8-7.2 GB/s and 8.8-11.9 against 5.5-9.4.
constexpr int kServerSpinUs = 500;

// --server_bandwidth: one RATE for every server, or one per server.
std::vector<double> ParseServerBandwidth(const std::string& text, int servers) {
  if (text.empty()) return std::vector<double>(servers, 0);
  std::vector<double> rates;
  try {
    std::stringstream list(text);
    for (std::string rate; std::getline(list, rate, ',');) {
      rates.push_back(straggler::ParseRate(rate));
    }
  } catch (const std::invalid_argument& e) {
    throw Error("--server_bandwidth=" + text + ": " + e.what());
  }
  if (rates.size() == 1) return std::vector<double>(servers, rates[0]);
  if (rates.size() != static_cast<size_t>(servers)) {
    throw Error("--server_bandwidth=" + text + ": " + std::to_string(rates.size()) + " rates for " +
                std::to_string(servers) + " servers (give one, or one per server)");
  }
  return rates;
}

std::string GroupName(int group) {
  std::string name;
  if (group & kSchedulerGroup) name += "scheduler";
  if (group & kServerGroup) name += name.empty() ? "servers" : "+servers";
  if (group & kWorkerGroup) name += name.empty() ? "workers" : "+workers";
  return name.empty() ? "none" : name;
}

// Takes ownership of `comm` (the transport frees it).
// Rank 0 schedules, ranks 1..servers serve, the rest work.
Role RoleOfRank(int rank, int servers) {
  if (rank == 0) return Role::kScheduler;
  return rank <= servers ? Role::kServer : Role::kWorker;
}

std::unique_ptr<Transport> CreateTransport(MPI_Comm comm, const Config& config) {
  const std::string& choice = config.transport;
  if (choice != "ucx" && choice != "mpi" && choice != "auto") {
    throw Error("unknown transport '" + choice + "': use ucx, mpi or auto");
  }
  if (choice == "mpi") return std::make_unique<MpiTransport>(comm, config);
  MPI_Comm ucx_comm;
  MPI_Comm_dup(comm, &ucx_comm);
  std::unique_ptr<Transport> ucx;
  std::string why;
  try {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    // Servers send their stored values, pooled on huge pages: the worker reads them. Workers send
    // their callers' memory: they write it into the server's pooled buffer.
    const auto rendezvous = RoleOfRank(rank, config.servers) == Role::kServer
                                ? UcxTransport::Rendezvous::kReceiverReads
                                : UcxTransport::Rendezvous::kSenderWrites;
    ucx = std::make_unique<UcxTransport>(ucx_comm, config, rendezvous);
  } catch (const Error& e) {
    why = e.what();
  }
  // Every rank must pick the same transport: fall back to MPI if UCX failed anywhere.
  int ok = ucx != nullptr, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  if (all_ok) {
    MPI_Comm_free(&comm);
    return ucx;
  }
  if (ucx) {
    ucx.reset();  // frees ucx_comm
  } else {
    MPI_Comm_free(&ucx_comm);
  }
  if (choice == "ucx") throw Error("transport ucx requested but UCX did not initialize: " + why);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    LOG(WARNING) << "UCX did not initialize on every rank (" << (why.empty() ? "elsewhere" : why)
                 << "); using the MPI transport";
  }
  return std::make_unique<MpiTransport>(comm, config);
}

// Servers and workers on this rank's host (the scheduler mostly sleeps, so it is not counted).
int BusyRanksOnThisHost(MPI_Comm comm) {
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int local_ranks = 0, rank = 0, scheduler_here = 0;
  MPI_Comm_size(local, &local_ranks);
  MPI_Comm_rank(comm, &rank);
  int is_scheduler = rank == 0;
  MPI_Allreduce(&is_scheduler, &scheduler_here, 1, MPI_INT, MPI_MAX, local);
  MPI_Comm_free(&local);
  return local_ranks - scheduler_here;
}

// Fills in the settings whose default depends on how many busy ranks share this host's cores, and
// returns whether they fit the cores. Collective over `comm`: every rank counts, whatever it was
// given, so that ranks launched with different settings (MPMD) still meet.
//
// The progress thread may spin only where the busy ranks fit the cores: a spinning thread on an
// oversubscribed host delays the very thread it waits for (measured: one spinning PS ran 6x to
// 3000x slower than a blocking one). Servers poll longer than the others (kServerSpinUs).
//
// A sum or step uses the rank's share of the cores, not all of them: the threads of a server's
// sum otherwise take the core its worker copies on (1 MiB pushes, window 8, 1 server + 1 worker on
// 2 cores: 10.7-12.3 GB/s with 1 thread against 6.8-9.3 with 2; 2 servers + 2 workers: 7.9-8.8
// against 6.9-7.5).
bool ResolveHostShares(MPI_Comm comm, Config& config) {
  const int busy = std::max(1, BusyRanksOnThisHost(comm));
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const bool fit = busy <= cores;
  if (config.spin_us < 0) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const bool server = RoleOfRank(rank, config.servers) == Role::kServer;
    config.spin_us = !fit ? 0 : server ? kServerSpinUs : kDefaultSpinUs;
  }
  if (config.reduce_threads <= 0) config.reduce_threads = std::max(1, cores / busy);
  return fit;
}

}  // namespace

std::unique_ptr<SessionCore> SessionCore::CreateWithMpi(const Config& requested) {
  if (!google::IsGoogleLoggingInitialized()) {
    FLAGS_logtostderr = true;  // not glog's default of files under /tmp
    google::InitGoogleLogging("pacer");
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  bool finalize_mpi = false;
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    finalize_mpi = true;
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  Config config = requested;
  const bool ranks_fit_cores = ResolveHostShares(comm, config);
  return std::make_unique<SessionCore>(config, CreateTransport(comm, config), finalize_mpi,
                                       ranks_fit_cores);
}

SessionCore::SessionCore(const Config& config, std::unique_ptr<Transport> transport,
                         bool finalize_mpi, bool ranks_fit_cores)
    : config_(config),
      transport_(std::move(transport)),
      routing_(std::make_shared<Router>(config.servers > 0 ? config.servers : 1)),
      rank_(transport_->rank()),
      size_(transport_->size()),
      transport_name_(transport_->name()),
      finalize_mpi_(finalize_mpi),
      ranks_fit_cores_(ranks_fit_cores) {
  int size = size_;
  if (config_.servers < 1 || size < config_.servers + 2) {
    std::ostringstream s;
    s << "a job of " << size << " ranks cannot have " << config_.servers
      << " servers: it needs 1 scheduler, at least 1 server and at least 1 worker (--servers, "
         "PACER_SERVERS)";
    throw Error(s.str());
  }
  if (config_.balance != "none" && config_.balance != "sas") {
    throw Error("--balance=" + config_.balance + ": expected none or sas");
  }
  server_bandwidth_ = ParseServerBandwidth(config_.server_bandwidth, config_.servers);
  role_ = RoleOf(transport_->rank());
  for (const std::string& spec : config_.inject) {
    try {
      faults_.push_back(straggler::FaultSpec::Parse(spec));
    } catch (const std::invalid_argument& e) {
      throw Error(e.what());
    }
  }
  const bool shaped_links = std::any_of(faults_.begin(), faults_.end(), [](const auto& f) {
    return f.target == straggler::FaultSpec::Target::kLink;
  });
  if (shaped_links) {
    transport_ = std::make_unique<ShapedTransport>(std::move(transport_), faults_, config_.servers,
                                                   static_cast<uint64_t>(config_.inject_seed));
  }
  if (rank_ == 0 && (!faults_.empty() || !config_.metrics.empty())) {
    // Specs name nodes by role index, metrics by rank too: say how they match.
    LOG(INFO) << "ranks: 0 is the scheduler; servers 0.." << num_servers() - 1 << " are ranks 1.."
              << num_servers() << "; workers 0.." << num_workers() - 1 << " are ranks "
              << num_servers() + 1 << ".." << size_ - 1;
  }
  transport_->SetPayloadConsumers([this](const Message& msg) { return ConsumePayload(msg); });
  transport_->Start([this](Message&& msg) { Dispatch(std::move(msg)); },
                    [this](const DecodedHeader& header) { return PlacePayload(header); });
}

SessionCore::~SessionCore() {
  if (!finalized_) {
    try {
      Finalize();
    } catch (const std::exception& e) {
      LOG(ERROR) << "rank " << rank() << ": finalize failed: " << e.what();
    }
  }
}

double SessionCore::SecondsSinceStart() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

Role SessionCore::RoleOf(int rank) const { return RoleOfRank(rank, config_.servers); }

Reducer& SessionCore::reducer() {
  std::call_once(reducer_once_, [this] {
    const std::string& device = config_.reduce_device;
    if (device != "cpu" && device != "cuda") {
      throw Error("--reduce_device=" + device + ": expected cpu or cuda");
    }
    reducer_ = MakeReducer(device == "cuda" ? Device::kCuda : Device::kCpu, config_.reduce_threads);
  });
  return *reducer_;
}

std::shared_ptr<const Router> SessionCore::routing() const {
  std::lock_guard<std::mutex> lock(routing_mu_);
  return routing_;
}

bool SessionCore::InstallRouting(const Router& table) {
  std::lock_guard<std::mutex> lock(routing_mu_);
  if (table.epoch() <= routing_->epoch()) return false;
  routing_ = std::make_shared<const Router>(table);
  return true;
}

// The scheduler's new table after a migration. Servers pass it on to their KVServers, which may
// hold requests routed by it.
void SessionCore::HandleRoutingUpdate(Message&& msg) {
  if (msg.meta.sender() != 0) {
    LOG(WARNING) << "rank " << rank() << " dropped a routing table from rank " << msg.meta.sender()
                 << ": only the scheduler sends them";
    return;
  }
  try {
    InstallRouting(Router::Decode(msg.meta.routing(), num_servers()));
  } catch (const Error& e) {
    LOG(WARNING) << "rank " << rank()
                 << " dropped a routing table from the scheduler: " << e.what();
    return;
  }
  std::lock_guard<std::mutex> lock(sinks_mu_);
  for (auto& entry : servers_) {
    Message copy;
    copy.meta = msg.meta;
    entry.second(std::move(copy));
  }
}

int SessionCore::role_index() const {
  switch (role_) {
    case Role::kScheduler:
      return 0;
    case Role::kServer:
      return rank() - 1;
    case Role::kWorker:
      return rank() - 1 - config_.servers;
  }
  return 0;
}

void SessionCore::AttachServer(int app_id, Sink sink, Consumers consumers) {
  std::vector<Message> early;
  std::lock_guard<std::mutex> lock(sinks_mu_);
  if (role_ != Role::kServer) {
    throw Error("rank " + std::to_string(rank()) + " is a " + RoleName(role_) +
                ", not a server: it cannot host a KVServer");
  }
  if (servers_.count(app_id)) {
    throw Error("a KVServer for app " + std::to_string(app_id) + " already exists on rank " +
                std::to_string(rank()));
  }
  servers_[app_id] = sink;
  if (consumers) server_consumers_[app_id] = std::move(consumers);
  detached_servers_.erase(app_id);
  early.swap(early_requests_[app_id]);
  early_requests_.erase(app_id);
  for (Message& msg : early) sink(std::move(msg));
}

void SessionCore::DetachServer(int app_id) {
  std::lock_guard<std::mutex> lock(sinks_mu_);
  servers_.erase(app_id);
  server_consumers_.erase(app_id);
  detached_servers_.insert(app_id);
}

int SessionCore::AttachClient(Sink sink, Placer placer) {
  std::lock_guard<std::mutex> lock(sinks_mu_);
  int id = next_client_id_++;
  clients_[id] = std::move(sink);
  if (placer) placers_[id] = std::move(placer);
  return id;
}

void SessionCore::DetachClient(int client_id) {
  std::lock_guard<std::mutex> lock(sinks_mu_);
  clients_.erase(client_id);
  placers_.erase(client_id);
}

uint8_t* SessionCore::PlacePayload(const DecodedHeader& header) {
  if (!header.meta.is_response()) return nullptr;
  std::lock_guard<std::mutex> lock(sinks_mu_);
  auto it = placers_.find(header.meta.client_id());
  return it == placers_.end() ? nullptr : it->second(header);
}

std::shared_ptr<PayloadConsumer> SessionCore::ConsumePayload(const Message& msg) {
  if (msg.meta.is_response()) return nullptr;
  std::lock_guard<std::mutex> lock(sinks_mu_);
  auto it = server_consumers_.find(msg.meta.app_id());
  return it == server_consumers_.end() ? nullptr : it->second(msg);
}

void SessionCore::SendOrLog(int dst, const Message& msg) {
  try {
    transport_->Send(dst, msg, nullptr);
  } catch (const Error& e) {
    LOG(ERROR) << "rank " << rank() << ": " << e.what();
  }
}

Message SessionCore::ReplyTo(const proto::Meta& request) const {
  Message reply;
  reply.meta.set_command(request.command());
  reply.meta.set_is_response(true);
  reply.meta.set_sender(rank());
  reply.meta.set_app_id(request.app_id());
  reply.meta.set_client_id(request.client_id());
  reply.meta.set_request_id(request.request_id());
  reply.meta.set_part(request.part());
  return reply;
}

void SessionCore::RejectRequest(const proto::Meta& request, const std::string& error) {
  std::ostringstream s;
  s << RoleName(role_) << " rank " << rank() << " rejected " << Describe(request) << " from rank "
    << request.sender() << ": " << error;
  LOG(WARNING) << s.str();
  Message reply = ReplyTo(request);
  reply.meta.set_error(s.str());
  SendOrLog(request.sender(), reply);
}

void SessionCore::RedirectRequest(const proto::Meta& request, bool pushed) {
  Message reply = ReplyTo(request);
  reply.meta.set_redirect(true);
  reply.meta.set_pushed(pushed);
  reply.meta.set_routing(routing()->Encode());
  SendOrLog(request.sender(), reply);
}

void SessionCore::Dispatch(Message&& msg) {
  const proto::Meta& meta = msg.meta;
  switch (meta.command()) {
    case proto::BARRIER:
      HandleBarrierRequest(msg);
      return;
    case proto::ITERATION_REPORT:
    case proto::SERVER_REPORT:
      HandleReport(msg);
      return;
    case proto::ROUTING_UPDATE:
      HandleRoutingUpdate(std::move(msg));
      return;
    case proto::BARRIER_RELEASE: {
      std::lock_guard<std::mutex> lock(barrier_mu_);
      ++barriers_released_[meta.barrier_group()];
      barrier_cv_.notify_all();
      return;
    }
    default:
      break;
  }
  std::unique_lock<std::mutex> lock(sinks_mu_);
  if (meta.command() == proto::TASK && !meta.is_response()) {
    if (task_sink_) {
      task_sink_(std::move(msg));
    } else if (role_ == Role::kScheduler) {
      early_tasks_.push_back(std::move(msg));  // a worker asked before the authority attached
    } else {
      lock.unlock();
      RejectRequest(meta, "only the scheduler (rank 0) grants tasks");
    }
    return;
  }
  if (meta.is_response()) {
    auto it = clients_.find(meta.client_id());
    if (it == clients_.end()) {
      LOG(WARNING) << "rank " << rank() << " dropped a response for unknown client "
                   << meta.client_id() << " (" << Describe(meta) << ") from rank " << meta.sender();
      return;
    }
    it->second(std::move(msg));
    return;
  }
  if (role_ != Role::kServer) {
    lock.unlock();
    RejectRequest(meta, std::string("rank is a ") + RoleName(role_) + ", not a server");
    return;
  }
  auto it = servers_.find(meta.app_id());
  if (it != servers_.end()) {
    it->second(std::move(msg));
  } else if (detached_servers_.count(meta.app_id())) {
    lock.unlock();
    RejectRequest(meta, "no KVServer for app " + std::to_string(meta.app_id()) + " any more");
  } else {
    early_requests_[meta.app_id()].push_back(std::move(msg));
  }
}

namespace {

template <typename Report>
Message ReportMessage(proto::Command command, int sender, const Report& report) {
  Message msg;
  msg.meta.set_command(command);
  msg.meta.set_sender(sender);
  msg.meta.set_value_size(sizeof(double));  // reports are 8-byte fields
  msg.vals.push_back(EncodeReport(report));
  return msg;
}

}  // namespace

void SessionCore::Report(const IterationReport& report) {
  std::lock_guard<std::mutex> lock(report_mu_);
  if (!transport_stopped_) SendOrLog(0, ReportMessage(proto::ITERATION_REPORT, rank(), report));
}

// Servers report from a thread of their own, which may outlive the transport: the lock keeps the
// transport from stopping during a send.
void SessionCore::Report(const ServerReport& report) {
  std::lock_guard<std::mutex> lock(report_mu_);
  if (!transport_stopped_) SendOrLog(0, ReportMessage(proto::SERVER_REPORT, rank(), report));
}

void SessionCore::SetReportSinks(ReportSink workers, ServerReportSink servers) {
  std::lock_guard<std::mutex> lock(sinks_mu_);
  report_sink_ = std::move(workers);
  server_report_sink_ = std::move(servers);
}

void SessionCore::SetTaskSink(Sink sink) {
  std::lock_guard<std::mutex> lock(sinks_mu_);
  task_sink_ = std::move(sink);
  if (!task_sink_) return;
  for (Message& msg : early_tasks_) task_sink_(std::move(msg));
  early_tasks_.clear();
}

void SessionCore::HandleReport(const Message& msg) {
  const int sender = msg.meta.sender();
  const bool from_worker = msg.meta.command() == proto::ITERATION_REPORT;
  std::string error;
  if (role_ != Role::kScheduler ||
      RoleOf(sender) != (from_worker ? Role::kWorker : Role::kServer)) {
    error = "reports go from workers and servers to the scheduler";
  } else if (from_worker) {
    IterationReport report;
    if (DecodeReport(msg.vals_buffer(), &report, &error)) {
      std::lock_guard<std::mutex> lock(sinks_mu_);
      if (report_sink_) report_sink_(sender, report);
      return;
    }
  } else {
    ServerReport report;
    if (DecodeReport(msg.vals_buffer(), &report, &error)) {
      std::lock_guard<std::mutex> lock(sinks_mu_);
      if (server_report_sink_) server_report_sink_(sender, report);
      return;
    }
  }
  LOG(WARNING) << "rank " << rank() << " dropped a report from rank " << sender << ": " << error;
}

int SessionCore::GroupSize(int group) const {
  int n = 0;
  if (group & kSchedulerGroup) n += 1;
  if (group & kServerGroup) n += num_servers();
  if (group & kWorkerGroup) n += num_workers();
  return n;
}

void SessionCore::HandleBarrierRequest(const Message& msg) {
  int group = msg.meta.barrier_group();
  int sender = msg.meta.sender();
  if (role_ != Role::kScheduler) {
    LOG(ERROR) << "rank " << rank() << " is not the scheduler: dropped a barrier from rank "
               << sender;
    return;
  }
  static const int kRoleBit[] = {kSchedulerGroup, kServerGroup, kWorkerGroup};
  if ((group & ~kAllNodes) != 0 || !(group & kRoleBit[static_cast<int>(RoleOf(sender))])) {
    LOG(ERROR) << "scheduler dropped a barrier for group " << group << " from rank " << sender
               << ", a " << RoleName(RoleOf(sender)) << " outside that group";
    return;
  }
  std::vector<int> release;
  {
    std::lock_guard<std::mutex> lock(barrier_mu_);
    std::vector<int>& arrived = barrier_arrivals_[group];
    arrived.push_back(sender);
    if (static_cast<int>(arrived.size()) == GroupSize(group)) release.swap(arrived);
  }
  for (int rank : release) {
    Message reply;
    reply.meta.set_command(proto::BARRIER_RELEASE);
    reply.meta.set_sender(0);
    reply.meta.set_barrier_group(group);
    SendOrLog(rank, reply);
  }
}

void SessionCore::Barrier(int group, std::optional<std::chrono::milliseconds> timeout) {
  static const int kRoleBit[] = {kSchedulerGroup, kServerGroup, kWorkerGroup};
  if ((group & ~kAllNodes) != 0 || !(group & kRoleBit[static_cast<int>(role_)])) {
    throw Error("rank " + std::to_string(rank()) + " (a " + RoleName(role_) +
                ") cannot enter a barrier of group " + GroupName(group));
  }
  int64_t target;
  {
    std::lock_guard<std::mutex> lock(barrier_mu_);
    target = ++barriers_entered_[group];
  }
  Message request;
  request.meta.set_command(proto::BARRIER);
  request.meta.set_sender(rank());
  request.meta.set_barrier_group(group);
  transport_->Send(0, request, nullptr);
  std::unique_lock<std::mutex> lock(barrier_mu_);
  auto released = [&] { return barriers_released_[group] >= target; };
  if (!timeout) {
    barrier_cv_.wait(lock, released);
  } else if (!barrier_cv_.wait_for(lock, *timeout, released)) {
    std::ostringstream s;
    s << "barrier of group " << GroupName(group) << " (" << GroupSize(group)
      << " nodes) timed out after " << timeout->count() << " ms on rank " << rank();
    throw TimeoutError(s.str());
  }
}

void SessionCore::SetFinalizeHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(finalize_mu_);
  finalize_hook_ = std::move(hook);
}

void SessionCore::Finalize() {
  if (finalized_) return;
  finalized_ = true;
  // Servers and the scheduler wait here for as long as the workers train: no deadline.
  Barrier(kAllNodes, std::nullopt);
  {
    std::lock_guard<std::mutex> lock(finalize_mu_);
    if (finalize_hook_) finalize_hook_();
  }
  {
    std::lock_guard<std::mutex> lock(report_mu_);
    transport_stopped_ = true;
  }
  transport_->Stop();
  transport_.reset();
  if (finalize_mpi_) MPI_Finalize();
}

}  // namespace pacer
