#include "ps/node/node.h"

#include <glog/logging.h>

#include <algorithm>
#include <exception>
#include <mutex>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "pacer/sync_mode.h"
#include "ps/cluster/host_shares.h"
#include "ps/node/configuration_agreement.h"
#include "ps/transport/shaped_transport.h"

namespace pacer {
namespace {

// "1..3" for consecutive ranks, else "1, 3, 5".
std::string RankList(const std::vector<int>& ranks) {
  if (ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size())) {
    return StrCat(ranks.front(), "..", ranks.back());
  }
  std::string list;
  for (int rank : ranks) list += StrCat(list.empty() ? "" : ", ", rank);
  return list;
}

// Where a job spans hosts, which ranks each runs and which of them serve.
void LogHosts(const std::vector<std::string>& hosts, const Roles& roles) {
  std::vector<std::string> names;
  std::vector<std::vector<int>> ranks;
  for (int rank = 0; rank < static_cast<int>(hosts.size()); ++rank) {
    const size_t h = std::find(names.begin(), names.end(), hosts[rank]) - names.begin();
    if (h == names.size()) {
      names.push_back(hosts[rank]);
      ranks.emplace_back();
    }
    ranks[h].push_back(rank);
  }
  if (names.size() < 2) return;
  std::string line = StrCat(names.size(), " hosts:");
  for (size_t h = 0; h < names.size(); ++h) {
    int servers = 0;
    for (int rank : ranks[h]) servers += roles.RoleOf(rank) == Role::kServer ? 1 : 0;
    line += StrCat(h == 0 ? " " : "; ", names[h], " ranks ", RankList(ranks[h]), " (", servers,
                   servers == 1 ? " server)" : " servers)");
  }
  LOG(INFO) << line;
}

}  // namespace

std::unique_ptr<Node> Node::Join(const Config& requested, std::unique_ptr<Bootstrap> bootstrap,
                                 const TransportOpener& open) {
  static std::once_flag logging;  // ranks of one process join at once
  std::call_once(logging, [] {
    if (google::IsGoogleLoggingInitialized()) return;
    FLAGS_logtostderr = true;  // not glog's default of files under /tmp
    google::InitGoogleLogging("pacer");
  });
  // A rank that finds a problem still meets the others once, so that they all stop with it.
  std::string problem;
  std::optional<Roles> checked_roles;
  JobSettings settings;
  const double timeout_s = requested.timeout_s > 0 ? requested.timeout_s : Config().timeout_s;
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  const std::vector<std::string>& hosts = bootstrap->Hosts(timeout);
  try {
    checked_roles.emplace(hosts, requested.servers,
                          Roles::PlacementNamed(requested.server_placement));
    settings = JobSettings::Check(requested, *checked_roles);
  } catch (const Error& e) {
    problem = e.what();
  }
  AgreeOnConfiguration(*bootstrap, requested, problem, timeout);
  const Roles roles = *checked_roles;
  if (bootstrap->rank() == 0) LogHosts(hosts, roles);
  Config config = requested;
  const bool fit = ResolveHostShares(*bootstrap, roles, config, timeout);
  std::unique_ptr<Transport> transport = open(*bootstrap, config, roles.RoleOf(bootstrap->rank()));
  const bool shaped_links =
      std::any_of(settings.faults.begin(), settings.faults.end(),
                  [](const auto& f) { return f.target == FaultSpec::Target::kLink; });
  if (shaped_links) {
    transport = std::make_unique<ShapedTransport>(std::move(transport), settings.faults,
                                                  roles.server_ranks(), roles.worker_ranks(),
                                                  static_cast<uint64_t>(config.inject_seed));
  }
  return std::unique_ptr<Node>(new Node(config, std::move(settings), roles, std::move(bootstrap),
                                        std::move(transport), fit));
}

Node::Node(const Config& config, JobSettings settings, const Roles& roles,
           std::unique_ptr<Bootstrap> bootstrap, std::unique_ptr<Transport> transport,
           bool ranks_fit_cores)
    : config_(config),
      settings_(std::move(settings)),
      dispatcher_(
          roles.RoleOf(transport->rank()), transport->rank(),
          [this](const proto::Meta& request, const std::string& error) {
            cluster_.Reject(request, error);
          },
          std::chrono::milliseconds(static_cast<int64_t>(config.timeout_s * 1000))),
      cluster_(roles, std::move(bootstrap), std::move(transport), ranks_fit_cores,
               std::chrono::milliseconds(static_cast<int64_t>(config.heartbeat_timeout_s * 1000))),
      routing_(cluster_, dispatcher_) {
  if (role() == Role::kScheduler) {
    // Workers may ask for tasks and report before the scheduler's parts are in place.
    dispatcher_.Hold(proto::TASK);
    dispatcher_.Hold(proto::ITERATION_REPORT);
    dispatcher_.Hold(proto::SERVER_REPORT);
    dispatcher_.Hold(proto::BATCH_SIZES);  // for STRET's batch tuning, where the job runs it
  }
  if (role() == Role::kWorker) {
    // The scheduler's relay orders and a straggler's may come before this worker's GradientSync.
    for (proto::Command command :
         {proto::RELAY_ORDER, proto::RELAY_START, proto::RELAY_STOP, proto::RELAY_GRADIENT,
          proto::RELAY_PARAMETERS, proto::LINK_PROBE, proto::PROBE_ECHO, proto::BATCH_ORDER}) {
      dispatcher_.Hold(command);
    }
  }
  if (rank() == 0 && (!settings_.faults.empty() || !config_.metrics.empty())) {
    // Specs name nodes by role index, metrics by rank too: say how they match.
    LOG(INFO) << "ranks: 0 is the scheduler; servers 0.." << roles.num_servers() - 1
              << " are ranks " << RankList(roles.server_ranks()) << "; workers 0.."
              << roles.num_workers() - 1 << " are ranks " << RankList(roles.worker_ranks());
  }
  if (role() == Role::kScheduler) {
    // A worker is the worst straggler: where the rule does not wait for every worker, or the job
    // asks (--on_worker_loss=continue), the job goes on without a lost one. Worker 0 holds the
    // job's first values and writes its outputs: losing it ends the job.
    const bool waits_for_all = SyncMode::Starting(config_.sync).kind == SyncMode::Kind::kBsp;
    const bool spare = !waits_for_all || config_.on_worker_loss == "continue";
    cluster_.SurviveLosses([spare, roles](int rank) {
      return spare && roles.RoleOf(rank) == Role::kWorker && roles.IndexOf(rank) > 0;
    });
  }
  cluster_.Start(dispatcher_);
}

Node::~Node() {
  if (!finalized_) {
    try {
      Finalize();
    } catch (const LostRankError&) {
      // Cluster::Fail logged it.
    } catch (const std::exception& e) {
      LOG(ERROR) << "rank " << rank() << ": finalize failed: " << e.what();
    }
  }
  std::lock_guard<std::mutex> lock(parts_mu_);
  parts_.clear();
}

Reducer& Node::reducer() {
  std::call_once(reducer_once_, [this] {
    const std::string& device = config_.reduce_device;
    if (device != "cpu" && device != "cuda") {
      throw Error("--reduce_device=" + device + ": expected cpu or cuda");
    }
    reducer_ = MakeReducer(device == "cuda" ? Device::kCuda : Device::kCpu, config_.reduce_threads);
  });
  return *reducer_;
}

void Node::Report(const IterationReport& report) {
  cluster_.SendWhileRunning(0, ReportMessage(report, rank()));
}

void Node::Report(const ServerReport& report) {
  cluster_.SendWhileRunning(0, ReportMessage(report, rank()));
}

void Node::Adopt(std::unique_ptr<NodePart> part) {
  std::lock_guard<std::mutex> lock(parts_mu_);
  parts_.push_back(std::move(part));
}

void Node::Finalize() {
  if (finalized_) return;
  finalized_ = true;
  std::exception_ptr failure;
  try {
    cluster_.Barrier(kAllNodes, std::nullopt);
    cluster_.EndLiveness();
  } catch (const Error&) {
    failure = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(parts_mu_);
    for (auto& part : parts_) part->Stop();
  }
  cluster_.Close();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace pacer
