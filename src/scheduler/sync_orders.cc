#include "scheduler/sync_orders.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/str_cat.h"
#include "straggler/noise_scale.h"

namespace pacer {
namespace {

constexpr int64_t kWarmUp = 3;  // iterations not profiled: connections and caches warm up
// The groups mode's bound: groups of different speeds never wait for each other in a job.
constexpr int kGroupsBound = 100000;

straggler::SyncChooserOptions OptionsOf(const Config& c) {
  straggler::SyncChooserOptions o;
  o.group_gap_s = c.auto_group_gap_ms / 1e3;
  return o;
}

using Kind = straggler::Detection::Kind;

}  // namespace

SyncOrders::SyncOrders(Node& node, MetricsLog& metrics, const StragglerWatch& watch,
                       const AllowedBatches& allowed, BatchOwner& owner)
    : node_(node),
      metrics_(metrics),
      watch_(watch),
      allowed_(allowed),
      owner_(owner),
      window_(node.config().auto_window),
      options_(OptionsOf(node.config())),
      orders_(node),
      coordinator_(node, 0) {}

SyncOrders::~SyncOrders() { Stop(); }

void SyncOrders::Stop() {
  orders_.Cancel();
  queue_.Stop();
}

void SyncOrders::OnIteration(int index, int rank, const IterationReport& r) {
  Row& row = pending_[r.iteration];
  if (row.busy_s.empty()) {
    const size_t n = static_cast<size_t>(node_.roles().num_workers());
    row.busy_s.assign(n, 0);
    row.rest_s.assign(n, 0);
    row.norm2.assign(n, 0);
    row.batch.assign(n, 0);
  }
  const size_t i = static_cast<size_t>(index);
  row.busy_s[i] = r.compute_s + r.push_s;
  row.rest_s[i] = std::max(0.0, r.total_s - row.busy_s[i]);
  row.norm2[i] = r.gradient_norm2;
  row.batch[i] = r.batch_size;
}

void SyncOrders::OnExclusion(int index) {
  std::lock_guard<std::mutex> lock(excluded_mu_);
  excluded_.insert(index);
}

std::vector<int> SyncOrders::Live() const {
  std::lock_guard<std::mutex> lock(excluded_mu_);
  std::vector<int> live;
  for (int w = 0; w < node_.roles().num_workers(); ++w) {
    if (!excluded_.count(w)) live.push_back(w);
  }
  return live;
}

void SyncOrders::OnBoundary(int64_t iteration) {
  const auto it = pending_.find(iteration);
  if (it == pending_.end()) return;
  const Row row = std::move(it->second);
  pending_.erase(pending_.begin(), std::next(it));
  const std::vector<int> live = Live();
  const bool full = std::all_of(live.begin(), live.end(),
                                [&](int w) { return row.batch[static_cast<size_t>(w)] == full_; });
  if ((phase_ == Phase::kFullBatch || phase_ == Phase::kHalfBatch) &&
      iteration >= profile_deadline_) {
    AbandonProfile(iteration);
    return;
  }
  switch (phase_) {
    case Phase::kWarmUp: {
      if (iteration + 1 < kWarmUp) return;
      full_ = static_cast<int>(*std::max_element(row.batch.begin(), row.batch.end()));
      std::vector<int> common;
      try {
        common = allowed_.Common();
      } catch (const std::exception&) {
        // A worker that allows no other size: the noise scale stays unknown.
      }
      if (full_ % 2 == 0 && std::count(common.begin(), common.end(), full_ / 2) > 0) {
        half_ = full_ / 2;
      }
      phase_ = Phase::kFullBatch;
      profile_deadline_ = iteration + kProfileWindows * window_;
      return;
    }
    case Phase::kFullBatch:
      if (!full) return;
      rows_.push_back(row);
      if (static_cast<int>(rows_.size()) < window_) return;
      if (half_ > 0 && live.size() > 1) {
        phase_ = Phase::kHalfBatch;
        flagged_before_noise_ =
            watch_.FlaggedWorkers({Kind::kCompute, Kind::kCommunication, Kind::kBoth});
        std::vector<int> halved;
        for (size_t i = 0; i < live.size(); i += 2) halved.push_back(live[i]);
        queue_.Post([this, halved, half = half_] { OrderBatch(halved, half, 0.5); });
        return;
      }
      noise_scale_ = std::numeric_limits<double>::infinity();
      LOG(WARNING) << "--sync=auto: "
                   << (half_ > 0 ? std::string("one worker, whose norms at two sizes would come "
                                               "from different iterations")
                                 : StrCat("the workers allow no batch of half their ", full_,
                                          " samples (GradientSync::AllowBatchSizes)"))
                   << ": the gradient noise scale is taken as infinite (updates of more samples "
                      "are worth more)";
      break;
    case Phase::kHalfBatch: {
      // Only iterations in which the orders took: both sizes from the same point of training.
      if (std::none_of(live.begin(), live.end(),
                       [&](int w) { return row.batch[static_cast<size_t>(w)] == half_; })) {
        return;
      }
      for (int w : live) {
        const size_t i = static_cast<size_t>(w);
        if (row.batch[i] == half_) {
          norm_half_ += row.norm2[i];
          ++counted_half_;
        } else if (row.batch[i] == full_) {
          norm_full_ += row.norm2[i];
          ++counted_full_;
        }
      }
      // As many at each size as half a window of every other worker gives.
      const int64_t wanted =
          static_cast<int64_t>(window_ / 2) * static_cast<int64_t>(live.size() / 2);
      if (counted_half_ < wanted || counted_full_ < wanted) return;
      queue_.Post([this, live, full = full_] { OrderBatch(live, full, 1); });
      try {
        noise_scale_ = straggler::NoiseScale(half_, norm_half_ / counted_half_, full_,
                                             norm_full_ / counted_full_);
      } catch (const std::invalid_argument& e) {
        LOG(WARNING) << "--sync=auto: no gradient noise scale (" << e.what()
                     << "); taken as infinite";
        noise_scale_ = std::numeric_limits<double>::infinity();
      }
      break;
    }
    case Phase::kChosen: {
      if (full) {
        rows_.push_back(row);
        if (static_cast<int>(rows_.size()) > window_) rows_.pop_front();
      }
      const std::set<int> flagged =
          watch_.FlaggedWorkers({Kind::kCompute, Kind::kCommunication, Kind::kBoth});
      if (flagged != seen_) {
        seen_ = flagged;
        seen_since_ = iteration;
      } else if (seen_ != regime_ && iteration - seen_since_ >= window_) {
        regime_ = seen_;
        queue_.Post(
            [this, iteration, profile = Profile()] { Decide(iteration, profile, "regime"); });
      }
      return;
    }
  }
  // The profile is complete: the first decision.
  EnterChosen(iteration);
  queue_.Post([this, iteration, profile = Profile()] {
    Decide(iteration, profile, "profile");
    owner_.EndProfile();  // after the full batches were ordered back, on this queue
  });
}

void SyncOrders::EnterChosen(int64_t iteration) {
  // In the noise phase the halved workers look fast to the detector and the others slow, until
  // the full batch is back: the regime is what it flagged before.
  const bool after_noise = phase_ == Phase::kHalfBatch;
  phase_ = Phase::kChosen;
  regime_ = seen_ =
      after_noise ? flagged_before_noise_
                  : watch_.FlaggedWorkers({Kind::kCompute, Kind::kCommunication, Kind::kBoth});
  seen_since_ = iteration;
}

void SyncOrders::AbandonProfile(int64_t iteration) {
  const bool halved = phase_ == Phase::kHalfBatch;
  EnterChosen(iteration);
  const std::string why = StrCat("the profile had ", rows_.size(), " of ", window_,
                                 " iterations with every worker at the full batch of ", full_,
                                 halved ? " and not enough at the half batch" : "",
                                 " by iteration ", iteration, "; the job stays under bsp");
  LOG(WARNING) << "--sync=auto: " << why;
  queue_.Post([this, iteration, halved, why, live = Live(), full = full_, noise = noise_scale_] {
    if (halved) OrderBatch(live, full, 1);
    metrics_.Sync(iteration, node_.cluster().SecondsSinceStart(), "profile", "abandoned", mode_,
                  straggler::SyncChoice{}, noise, why);
    owner_.EndProfile();
  });
}

straggler::SyncProfile SyncOrders::Profile() const {
  straggler::SyncProfile p;
  p.batch = full_;
  p.noise_scale = noise_scale_;
  p.iterations_left = kGroupsBound;
  const std::vector<int> live = Live();
  for (const Row& row : rows_) {
    // What every worker pays besides its own compute and push: the least of the row's rests
    // (the slowest worker's, who waited for no one).
    double shared = std::numeric_limits<double>::infinity();
    for (int w : live) shared = std::min(shared, row.rest_s[static_cast<size_t>(w)]);
    std::vector<double> times;
    for (int w : live) times.push_back(row.busy_s[static_cast<size_t>(w)] + shared);
    p.times.push_back(std::move(times));
  }
  return p;
}

void SyncOrders::OrderBatch(const std::vector<int>& workers, int batch, double weight) {
  std::vector<straggler::TunedBatch> batches;
  for (int w : workers) batches.push_back({w, batch, weight});
  try {
    orders_.TuneBatches(batches, 1.0);
    LOG(INFO) << "--sync=auto: " << workers.size() << " workers run batches of " << batch
              << " (profiling)";
  } catch (const std::exception& e) {
    LOG(WARNING) << "--sync=auto: batches of " << batch << " failed: " << e.what();
  }
}

void SyncOrders::Decide(int64_t iteration, const straggler::SyncProfile& profile, const char* why) {
  const double t_s = node_.cluster().SecondsSinceStart();
  straggler::SyncChoice choice;
  try {
    choice = straggler::ChooseSync(profile, options_);
  } catch (const std::invalid_argument& e) {
    LOG(WARNING) << "iteration " << iteration << ": --sync=auto chose nothing: " << e.what();
    metrics_.Sync(iteration, t_s, why, "failed", mode_, choice, profile.noise_scale, e.what());
    return;
  }
  double current = std::numeric_limits<double>::infinity(), picked = 0;
  for (const straggler::SyncPrediction& p : choice.table) {
    if (p.mode == mode_) current = p.time_to_target;
    if (p.mode == choice.mode) picked = p.time_to_target;
  }
  const std::string from = mode_;
  const char* action = "keep";
  std::string detail;
  if (choice.mode != mode_ && picked <= (1 - kGain) * current) {
    try {
      const int64_t clock = coordinator_.Switch(SyncMode::Parse(choice.mode));
      mode_ = choice.mode;
      action = "switch";
      detail = "from clock " + std::to_string(clock);
    } catch (const std::exception& e) {
      action = "failed";
      detail = e.what();
    }
  }
  std::ostringstream table;
  for (const straggler::SyncPrediction& p : choice.table) {
    table << (table.tellp() > 0 ? ", " : "") << p.mode << " " << p.time_to_target;
  }
  LOG(INFO) << "iteration " << iteration << ": --sync=auto after the " << why << " (noise scale "
            << profile.noise_scale << "), picked " << choice.mode << ": " << action << " "
            << (mode_ == from ? from : "from " + from + " to " + mode_)
            << (detail.empty() ? "" : " (" + detail + ")")
            << "; predicted times to target: " << table.str();
  metrics_.Sync(iteration, t_s, why, action, from, choice, profile.noise_scale, detail);
}

}  // namespace pacer
