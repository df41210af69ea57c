#include "worker/relay_link.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/node/node.h"

namespace pacer {
namespace {

constexpr proto::Command kCommands[] = {proto::RELAY_ORDER, proto::RELAY_START, proto::RELAY_STOP,
                                        proto::RELAY_GRADIENT, proto::RELAY_PARAMETERS};

}  // namespace

RelayLink::RelayLink(Node& node)
    : node_(node), channel_(node.cluster(), node.dispatcher(), node.config().timeout_s) {
  failure_watch_ = node.cluster().WatchFailure([this](const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    failure_ = why;
    changed_.notify_all();
  });
  exclusion_watch_ = node.cluster().WatchExclusions([this](int rank, const std::string&) {
    std::lock_guard<std::mutex> lock(mu_);
    excluded_.push_back(rank);
    changed_.notify_all();
  });
  Dispatcher& d = node.dispatcher();
  d.Take(proto::RELAY_ORDER, [this](Message&& msg) { OnOrder(std::move(msg)); });
  d.Take(proto::RELAY_START, [this](Message&& msg) { OnStart(std::move(msg)); });
  d.Take(proto::RELAY_STOP, [this](Message&& msg) { OnStop(std::move(msg)); });
  d.Take(proto::RELAY_GRADIENT, [this](Message&& msg) { OnArrival(std::move(msg)); });
  d.Take(proto::RELAY_PARAMETERS, [this](Message&& msg) { OnArrival(std::move(msg)); });
}

RelayLink::~RelayLink() {
  for (proto::Command command : kCommands) node_.dispatcher().Take(command, nullptr);
  exclusion_watch_.reset();
  failure_watch_.reset();
}

void RelayLink::OnOrder(Message&& msg) {
  const int partner = msg.meta.relay_partner();
  std::string error;
  const Roles& roles = node_.roles();
  if (partner == node_.rank()) {
    error = StrCat("worker rank ", node_.rank(), " ordered to relay through itself");
  } else if (partner != -1 &&
             (partner < 0 || partner >= roles.size() || roles.RoleOf(partner) != Role::kWorker)) {
    error = StrCat("worker rank ", node_.rank(), " ordered to relay through rank ", partner,
                   ", which is not a worker of this job (", roles.size(), " ranks)");
  }
  if (msg.meta.withhold() && partner != -1) {
    error = StrCat("worker rank ", node_.rank(),
                   " ordered to withhold its gradients and to relay "
                   "them through rank ",
                   partner);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (error.empty()) {
      ordered_partner_ = partner;
      ordered_withhold_ = msg.meta.withhold();
    }
  }
  Message reply = ReplyTo(msg.meta, node_.rank());
  reply.meta.set_error(error);
  node_.cluster().SendOrLog(msg.meta.sender(), reply);
}

void RelayLink::Begin(int64_t clock, IterationPlan&) {
  int ordered = -1, current = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ordered = ordered_partner_;
    current = partner_;
    withholding_ = ordered_withhold_;
  }
  if (ordered == current) return;
  if (current >= 0) {
    node_.transport().Send(current, Make(proto::RELAY_STOP, clock, 0, 0, nullptr, 0), nullptr);
    std::lock_guard<std::mutex> lock(mu_);
    partner_ = -1;
  }
  if (ordered < 0) return;
  Message start = channel_.Request(proto::RELAY_START, node_.rank(), 0, channel_.Begin(1));
  start.meta.set_clock(clock);
  node_.transport().Send(ordered, start, nullptr);
  const proto::Meta answer =
      channel_.Wait(StrCat("asking worker rank ", ordered, " to relay from clock ", clock))[0];
  if (!answer.error().empty()) {
    LOG(WARNING) << "rank " << node_.rank() << " keeps pushing to the servers: " << answer.error();
    std::lock_guard<std::mutex> lock(mu_);
    if (ordered_partner_ == ordered) ordered_partner_ = -1;
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  partner_ = ordered;
  relay_from_ = answer.clock();
}

bool RelayLink::Withholds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return withholding_;
}

void RelayLink::End(IterationReport& report) { report.partner = PartnerFor(report.clock); }

int RelayLink::PartnerFor(int64_t clock) const {
  std::lock_guard<std::mutex> lock(mu_);
  return partner_ >= 0 && clock >= relay_from_ ? partner_ : -1;
}

void RelayLink::OnStart(Message&& msg) {
  const int straggler = msg.meta.sender();
  Message reply = ReplyTo(msg.meta, node_.rank());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (withholding_ || ordered_withhold_) {
      reply.meta.set_error(StrCat("worker rank ", node_.rank(), " cannot relay for rank ",
                                  straggler, ": it withholds its gradients"));
    } else if (partner_ >= 0 || ordered_partner_ >= 0) {
      reply.meta.set_error(StrCat("worker rank ", node_.rank(), " cannot relay for rank ",
                                  straggler, ": it sends its own gradients through rank ",
                                  std::max(partner_, ordered_partner_)));
    } else {
      const int64_t start = std::max<int64_t>(msg.meta.clock(), first_open_clock_);
      relays_[straggler].push_back({start, INT64_MAX});
      reply.meta.set_clock(start);
    }
  }
  node_.cluster().SendOrLog(straggler, reply);
}

void RelayLink::OnStop(Message&& msg) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = relays_.find(msg.meta.sender());
  if (it == relays_.end() || it->second.empty()) return;
  Window& last = it->second.back();
  last.stop = std::max(last.start, msg.meta.clock());
  changed_.notify_all();
}

void RelayLink::OnArrival(Message&& msg) {
  Arrival arrival;
  arrival.values = msg.vals_buffer().Owned();
  arrival.weight = msg.meta.has_weight() ? msg.meta.weight() : 1;
  arrival.stamp.version = msg.meta.version();
  arrival.stamp.complete_clock = msg.meta.complete_clock();
  std::lock_guard<std::mutex> lock(mu_);
  arrivals_[{msg.meta.sender(), msg.meta.clock(), msg.meta.part()}] = std::move(arrival);
  changed_.notify_all();
}

Message RelayLink::Make(proto::Command command, int64_t clock, int unit, Key key,
                        const float* values, size_t count) const {
  Message msg;
  msg.meta.set_command(command);
  msg.meta.set_sender(node_.rank());
  msg.meta.set_clock(clock);
  msg.meta.set_part(unit);
  if (values != nullptr) {  // copied: the caller's buffers change once its iteration ends
    msg.keys = Buffer::Copy(&key, sizeof(Key));
    msg.vals.push_back(Buffer::Copy(values, count * sizeof(float)));
    msg.meta.set_value_size(sizeof(float));
  }
  return msg;
}

void RelayLink::SendGradient(int64_t clock, int unit, Key key, const float* values, size_t count,
                             double weight) {
  Message msg = Make(proto::RELAY_GRADIENT, clock, unit, key, values, count);
  msg.meta.set_weight(weight);
  node_.transport().Send(PartnerFor(clock), msg, nullptr);
}

RelayLink::Arrival RelayLink::Await(const Slot& slot, const std::string& what,
                                    const std::function<bool()>& give_up) {
  std::unique_lock<std::mutex> lock(mu_);
  const int peer = std::get<0>(slot);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(node_.config().timeout_s));
  for (bool timed_out = false;;) {
    auto it = arrivals_.find(slot);
    if (it != arrivals_.end()) {
      Arrival arrival = std::move(it->second);
      arrivals_.erase(it);
      return arrival;
    }
    if (!failure_.empty()) throw LostRankError(StrCat(what, ": ", failure_));
    if (give_up && give_up()) return Arrival();
    if (std::find(excluded_.begin(), excluded_.end(), peer) != excluded_.end()) {
      throw LostRankError(StrCat(what, ": the job excluded rank ", peer));
    }
    if (timed_out) {
      throw TimeoutError(StrCat(what, ": nothing came within ", node_.config().timeout_s, " s"));
    }
    timed_out = changed_.wait_until(lock, deadline) == std::cv_status::timeout;
  }
}

ResponseStamp RelayLink::ReceiveParameters(int64_t clock, int unit, float* out, size_t count) {
  const int partner = PartnerFor(clock);
  const std::string what = StrCat("the parameters of key unit ", unit, " for clock ", clock + 1,
                                  " from relay partner rank ", partner);
  Arrival arrival = Await({partner, clock, unit}, what, nullptr);
  if (arrival.values.size() != count * sizeof(float)) {
    throw Error(
        StrCat(what, ": ", arrival.values.size(), " bytes, the key holds ", count, " floats"));
  }
  std::memcpy(out, arrival.values.data(), arrival.values.size());
  return arrival.stamp;
}

void RelayLink::BeginPushing(int64_t clock) {
  std::lock_guard<std::mutex> lock(mu_);
  first_open_clock_ = std::max(first_open_clock_, clock + 1);
  for (auto& [rank, windows] : relays_) {
    windows.erase(std::remove_if(windows.begin(), windows.end(),
                                 [&](const Window& w) { return w.stop < clock; }),
                  windows.end());
  }
}

std::vector<RelayLink::Relayed> RelayLink::Gather(int64_t clock, int unit, size_t count) {
  std::vector<int> stragglers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [rank, windows] : relays_) {
      for (const Window& w : windows) {
        if (w.start <= clock) {
          stragglers.push_back(rank);
          break;
        }
      }
    }
  }
  std::vector<Relayed> carried;
  for (int straggler : stragglers) {
    // The window may close before this clock (RELAY_STOP); until it does, the gradient comes.
    auto stopped = [&] {
      for (const Window& w : relays_[straggler]) {
        if (w.start <= clock && clock < w.stop) return false;
      }
      return true;
    };
    Arrival arrival = Await(
        {straggler, clock, unit},
        StrCat("relaying key unit ", unit, " of clock ", clock, " for rank ", straggler), stopped);
    if (arrival.values.size() == 0) continue;
    if (arrival.values.size() != count * sizeof(float)) {
      throw Error(StrCat("rank ", straggler, " relayed ", arrival.values.size(),
                         " bytes of key unit ", unit, ", which holds ", count, " floats"));
    }
    carried.push_back({straggler, std::move(arrival.values), arrival.weight});
  }
  return carried;
}

void RelayLink::ForwardParameters(int64_t clock, int unit, Key key,
                                  const std::vector<int>& stragglers, const float* values,
                                  size_t count, const ResponseStamp& stamp) {
  for (int straggler : stragglers) {
    Message msg = Make(proto::RELAY_PARAMETERS, clock, unit, key, values, count);
    msg.meta.set_version(stamp.version);
    msg.meta.set_complete_clock(stamp.complete_clock);
    node_.transport().Send(straggler, msg, nullptr);
  }
}

}  // namespace pacer
