#include "scheduler/stret_orders.h"

#include <glog/logging.h>

#include <algorithm>
#include <iterator>
#include <sstream>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

straggler::StretOptions OptionsOf(const Config& c) {
  straggler::StretOptions o;
  o.relays_per_partner = c.relays_per_partner;
  o.withhold_every = c.withhold_every;
  o.withhold_threshold = c.withhold_threshold;
  o.recovered_ratio = c.transfer_ratio;
  return o;
}

double Median(std::deque<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

StretOrders::StretOrders(Node& node, MetricsLog& metrics, const StragglerWatch& watch,
                         const AllowedBatches& allowed, BatchOwner& owner)
    : node_(node),
      metrics_(metrics),
      watch_(watch),
      allowed_(allowed),
      owner_(owner),
      orders_(node),
      policy_(OptionsOf(node.config())),
      server_bandwidth_(node.roles().num_workers()),
      compute_s_(node.roles().num_workers()),
      push_s_(node.roles().num_workers()) {}

StretOrders::~StretOrders() { Stop(); }

void StretOrders::Stop() {
  orders_.Cancel();
  queue_.Stop();
}

void StretOrders::OnIteration(int index, int rank, const IterationReport& r) {
  if (r.accuracy >= 0) accuracy_[r.iteration] = r.accuracy;
  if (r.batch_size > 0) {
    std::deque<double>& compute = compute_s_[index][static_cast<int>(r.batch_size)];
    compute.push_back(r.compute_s);
    if (compute.size() > kSamples) compute.pop_front();
    push_s_[index].push_back(r.push_s);
    if (push_s_[index].size() > kSamples) push_s_[index].pop_front();
    // The job's full batch: the most any worker ran. Worker 0's last may be one SMS shrank, or
    // STRN's profile halved, and would make the tuning shrink every worker to it.
    full_batch_ = std::max(full_batch_, static_cast<int>(r.batch_size));
  }
  // A relayed worker's traffic goes to its partner, which says nothing of its own link to the
  // servers: its bandwidth stays as last measured.
  if (policy_.PartnerOf(index) >= 0) return;
  // The pushes' rate: a push is acknowledged once it reached its server, while a pull waits for
  // the other workers (under BSP every worker's pull takes the straggler's time).
  if (r.push_s <= 0 || r.bytes_out <= 0) return;
  std::deque<double>& samples = server_bandwidth_[index];
  samples.push_back(static_cast<double>(r.bytes_out) / r.push_s);
  if (samples.size() > kSamples) samples.pop_front();
}

void StretOrders::OnExclusion(int index) { excluded_.insert(index); }

void StretOrders::OnBoundary(int64_t iteration) {
  using Kind = straggler::Detection::Kind;
  straggler::StretObservation o;
  o.iteration = iteration;
  o.num_workers = node_.roles().num_workers();
  o.communication = watch_.FlaggedWorkers({Kind::kCommunication, Kind::kBoth});
  o.compute = watch_.FlaggedWorkers({Kind::kCompute, Kind::kBoth});
  o.batches_held = !owner_.MayTune();
  o.excluded = excluded_;
  {
    // A probe's measure replaces the reports from before the relay.
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [worker, bandwidth] : probed_server_links_) {
      server_bandwidth_[worker].assign(1, bandwidth);
    }
    probed_server_links_.clear();
  }
  for (const std::deque<double>& samples : server_bandwidth_) {
    o.server_bandwidth.push_back(Median(samples));
  }
  // Points gained per iteration since the accuracy reported withhold_every iterations ago (or
  // the first one reported, early in the job).
  if (accuracy_.size() > 1) {
    auto then = accuracy_.upper_bound(iteration - node_.config().withhold_every);
    if (then != accuracy_.begin()) --then;
    const auto now = std::prev(accuracy_.end());
    if (now->first > then->first) {
      o.progress =
          100 * (now->second - then->second) / static_cast<double>(now->first - then->first);
    }
    accuracy_.erase(accuracy_.begin(), then);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    o.peer_bandwidth = peer_bandwidth_;
  }
  for (straggler::StretDecision& d : policy_.Decide(o)) {
    Order order{iteration, std::move(d), {}, full_batch_};
    if (order.decision.kind == straggler::StretDecision::Kind::kBatchTune) {
      for (int w = 0; w < o.num_workers; ++w) {
        if (excluded_.count(w) != 0) continue;
        straggler::BatchProfile profile{w, {}, Median(push_s_[w])};
        for (const auto& [batch, seconds] : compute_s_[w]) {
          profile.compute_s[batch] = Median(seconds);
        }
        order.profiles.push_back(std::move(profile));
      }
    }
    if (!queue_.Post([this, order = std::move(order)] { Execute(order); })) return;
  }
  if (iteration % kRecheckEvery != 0) return;
  for (int w = 0; w < o.num_workers; ++w) {
    if (policy_.PartnerOf(w) < 0 && !policy_.Withheld(w)) continue;
    if (!queue_.Post([this, w, iteration] { ProbeServerLinks(w, iteration); })) return;
  }
}

void StretOrders::ProbeServerLinks(int worker, int64_t iteration) {
  const straggler::StretDecision probe{straggler::StretDecision::Kind::kProbe, worker, -1,
                                       "its own links to the servers are measured"};
  try {
    const std::vector<double> bandwidth = orders_.Probe(worker, kProbeBytes, true);
    double sum = 0;
    std::ostringstream detail;
    for (int s = 0; s < static_cast<int>(bandwidth.size()); ++s) {
      sum += bandwidth[s];
      detail << (detail.tellp() > 0 ? ", " : "") << "server " << s << " " << bandwidth[s] / 1e6
             << " MB/s";
    }
    metrics_.Stret(iteration, node_.cluster().SecondsSinceStart(), RankOf(worker), -1, probe,
                   "done", detail.str());
    // A probe that did not come back (0) leaves the last measure.
    if (std::all_of(bandwidth.begin(), bandwidth.end(), [](double b) { return b > 0; })) {
      std::lock_guard<std::mutex> lock(mu_);
      probed_server_links_[worker] = sum;
    }
  } catch (const std::exception& e) {
    LOG(WARNING) << "STRET probe of worker " << worker
                 << "'s links to the servers failed: " << e.what();
    metrics_.Stret(iteration, node_.cluster().SecondsSinceStart(), RankOf(worker), -1, probe,
                   "failed", e.what());
  }
}

void StretOrders::Execute(const Order& order) {
  using Kind = straggler::StretDecision::Kind;
  const straggler::StretDecision& d = order.decision;
  const int rank = RankOf(d.straggler);
  const char* kind = straggler::StretKindName(d.kind);
  LOG(INFO) << "iteration " << order.iteration << ": STRET " << kind << " worker " << d.straggler
            << (d.partner >= 0 ? StrCat(" through worker ", d.partner) : std::string()) << ": "
            << d.reason;
  auto record = [&](const char* action, const std::string& detail) {
    metrics_.Stret(order.iteration, node_.cluster().SecondsSinceStart(), rank, RankOf(d.partner), d,
                   action, detail);
  };
  try {
    switch (d.kind) {
      case Kind::kProbe: {
        const std::vector<double> bandwidth = orders_.Probe(d.straggler, kProbeBytes);
        std::ostringstream detail;
        std::lock_guard<std::mutex> lock(mu_);
        for (int w = 0; w < static_cast<int>(bandwidth.size()); ++w) {
          if (w == d.straggler) continue;
          peer_bandwidth_[{std::min(w, d.straggler), std::max(w, d.straggler)}] = bandwidth[w];
          detail << (detail.tellp() > 0 ? ", " : "") << "worker " << w << " " << bandwidth[w] / 1e6
                 << " MB/s";
        }
        record("done", detail.str());
        return;
      }
      case Kind::kRelay:
        orders_.Relay(d.straggler, d.partner);
        break;
      case Kind::kEndRelay:
        orders_.Relay(d.straggler, -1);
        break;
      case Kind::kWithhold:
        orders_.Withhold(d.straggler, true);
        break;
      case Kind::kEndWithhold:
        orders_.Withhold(d.straggler, false);
        break;
      case Kind::kBatchTune:
        record("order", TuneBatches(order));
        owner_.MarkTuned();  // a tuning that failed leaves SMS its shrinks
        return;
    }
    record("order", d.reason);
  } catch (const std::exception& e) {
    LOG(WARNING) << "STRET " << kind << " of worker " << d.straggler << " failed: " << e.what();
    record("failed", e.what());
  }
}

std::string StretOrders::TuneBatches(const Order& order) {
  const int workers = static_cast<int>(order.profiles.size());  // the workers left
  std::vector<straggler::TunedBatch> tuned;
  try {
    tuned = straggler::TuneBatches(order.profiles, allowed_.Common(), order.nominal_batch);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  std::ostringstream detail;
  for (const straggler::TunedBatch& t : tuned) {
    detail << (detail.tellp() > 0 ? ", " : "") << "worker " << t.worker << " " << t.batch;
  }
  // Weights that sum to the workers, as untuned ones do: on-arrival modes apply them as they are.
  orders_.TuneBatches(tuned, workers);
  LOG(INFO) << "STRET tuned the batch sizes: " << detail.str();
  return detail.str();
}

}  // namespace pacer
