#include "straggler/stret_policy.h"

#include <algorithm>
#include <stdexcept>

#include "straggler/relay_matching.h"

namespace pacer {
namespace straggler {
namespace {

std::string Worker(int w) { return "worker " + std::to_string(w); }

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

const char* StretKindName(StretDecision::Kind kind) {
  switch (kind) {
    case StretDecision::Kind::kProbe:
      return "probe";
    case StretDecision::Kind::kRelay:
      return "relay";
    case StretDecision::Kind::kEndRelay:
      return "end_relay";
    case StretDecision::Kind::kWithhold:
      return "withhold";
    case StretDecision::Kind::kEndWithhold:
      return "end_withhold";
    case StretDecision::Kind::kBatchTune:
      return "batch_tune";
  }
  return "?";
}

StretPolicy::StretPolicy(const StretOptions& options) : options_(options) {
  if (options_.relays_per_partner < 1 || options_.settle_iterations < 0 ||
      options_.withhold_every < 1 || !(options_.relay_gain >= 1) ||
      !(options_.recovered_ratio >= 1)) {
    throw std::invalid_argument(
        "STRET options: relays per partner and the withhold period must be at least 1, the "
        "settling iterations not negative, the relay gain and recovered ratio at least 1");
  }
}

int StretPolicy::PartnerOf(int straggler) const {
  auto it = stragglers_.find(straggler);
  return it != stragglers_.end() && it->second.step == Step::kRelaying ? it->second.partner : -1;
}

bool StretPolicy::Withheld(int straggler) const {
  auto it = stragglers_.find(straggler);
  return it != stragglers_.end() && it->second.step == Step::kWithholding;
}

bool StretPolicy::Recovered(const StretObservation& o, int worker) const {
  std::vector<double> others;
  for (int w = 0; w < o.num_workers; ++w) {
    if (w != worker && o.server_bandwidth[w] > 0 && o.excluded.count(w) == 0) {
      others.push_back(o.server_bandwidth[w]);
    }
  }
  const double mine = o.server_bandwidth[worker];
  return mine > 0 && !others.empty() && mine * options_.recovered_ratio >= Median(others);
}

std::vector<StretDecision> StretPolicy::Decide(const StretObservation& o) {
  if (static_cast<int>(o.server_bandwidth.size()) != o.num_workers) {
    throw std::invalid_argument("STRET: server bandwidths of " +
                                std::to_string(o.server_bandwidth.size()) +
                                " workers in a job of " + std::to_string(o.num_workers));
  }
  for (const std::set<int>* flagged : {&o.communication, &o.compute}) {
    for (int w : *flagged) {
      if (w < 0 || w >= o.num_workers) {
        throw std::invalid_argument("STRET: a straggler flag for " + Worker(w) + " in a job of " +
                                    std::to_string(o.num_workers) + " workers");
      }
    }
  }
  for (const auto& [pair, bandwidth] : o.peer_bandwidth) {
    if (pair.first < 0 || pair.second >= o.num_workers || pair.first >= pair.second) {
      throw std::invalid_argument("STRET: a probe between workers " + std::to_string(pair.first) +
                                  " and " + std::to_string(pair.second) + " of " +
                                  std::to_string(o.num_workers));
    }
  }
  std::vector<StretDecision> out;
  EndSteps(o, &out);
  for (int w : o.communication) {
    if (stragglers_.count(w) == 0 && o.excluded.count(w) == 0) {
      stragglers_[w] = Straggler{Step::kFlagged, -1, o.iteration};
    }
  }
  Relay(o, &out);
  Escalate(o, &out);
  return out;
}

void StretPolicy::EndSteps(const StretObservation& o, std::vector<StretDecision>* out) {
  for (auto it = stragglers_.begin(); it != stragglers_.end();) {
    const int s = it->first;
    Straggler& st = it->second;
    if (o.excluded.count(s) != 0) {  // its partner's relay link lets go of it by itself
      it = stragglers_.erase(it);
      continue;
    }
    const bool recovered = Recovered(o, s);
    if (st.step == Step::kRelaying) {
      const bool partner_lost = o.excluded.count(st.partner) != 0;
      const bool partner_slow =
          partner_lost || o.communication.count(st.partner) + o.compute.count(st.partner) > 0;
      if (partner_slow || recovered) {
        out->push_back({StretDecision::Kind::kEndRelay, s, st.partner,
                        partner_lost   ? "its partner, " + Worker(st.partner) + ", was lost"
                        : partner_slow ? "its partner, " + Worker(st.partner) + ", straggles"
                                       : "its link to the servers recovered"});
        if (recovered) {
          it = stragglers_.erase(it);
          continue;
        }
        st = Straggler{Step::kFlagged, -1, o.iteration};
      }
    } else if (st.step == Step::kWithholding) {
      if (recovered) {
        out->push_back(
            {StretDecision::Kind::kEndWithhold, s, -1, "its link to the servers recovered"});
        it = stragglers_.erase(it);
        continue;
      }
    } else if (o.communication.count(s) == 0) {
      it = stragglers_.erase(it);  // cleared before any step took hold
      continue;
    }
    ++it;
  }
}

void StretPolicy::Relay(const StretObservation& o, std::vector<StretDecision>* out) {
  // Partners: workers that straggle in no way and relay for fewer than their limit.
  std::map<int, int> relaying_for;
  for (const auto& [s, st] : stragglers_) {
    if (st.step == Step::kRelaying) ++relaying_for[st.partner];
  }
  std::vector<int> healthy;
  for (int w = 0; w < o.num_workers; ++w) {
    if (stragglers_.count(w) == 0 && o.compute.count(w) == 0 && o.excluded.count(w) == 0) {
      healthy.push_back(w);
    }
  }
  auto peer = [&](int a, int b) {
    auto it = o.peer_bandwidth.find({std::min(a, b), std::max(a, b)});
    return it == o.peer_bandwidth.end() ? 0.0 : it->second;
  };
  std::vector<int> ready;
  for (auto& [straggler, st] : stragglers_) {
    const int s = straggler;  // C++17 lambdas cannot capture a structured binding
    if (st.step != Step::kFlagged && st.step != Step::kProbing) continue;
    const bool measured =
        std::all_of(healthy.begin(), healthy.end(), [&](int p) { return peer(s, p) > 0; });
    if (!measured && st.step == Step::kFlagged) {
      out->push_back({StretDecision::Kind::kProbe, s, -1,
                      "a communication straggler: its links to the other workers are measured"});
      st = Straggler{Step::kProbing, -1, o.iteration};
    } else if (measured || o.iteration - st.since >= options_.settle_iterations) {
      ready.push_back(s);  // a probe that never answered leaves its partner out
    }
  }
  if (ready.empty()) return;
  std::vector<int> slots;
  for (int p : healthy) {
    for (int k = relaying_for[p]; k < options_.relays_per_partner; ++k) slots.push_back(p);
  }
  // The relayed path: the straggler's link to the partner, then the partner's to the servers.
  auto worth = [&](int s, int p) {
    const double to_partner = peer(s, p), onward = o.server_bandwidth[p];
    if (to_partner <= 0 || onward <= 0) return 0.0;
    const double path = 1 / (1 / to_partner + 1 / onward);
    const double direct = o.server_bandwidth[s];
    return direct > 0 && path < options_.relay_gain * direct ? 0.0 : path;
  };
  std::vector<RelayPair> pairs = MatchRelays(ready, slots, worth);
  std::set<int> matched;
  for (const RelayPair& pair : pairs) {
    stragglers_[pair.straggler] = Straggler{Step::kRelaying, pair.partner, o.iteration};
    matched.insert(pair.straggler);
    out->push_back({StretDecision::Kind::kRelay, pair.straggler, pair.partner,
                    "the partner's path to the servers has the most bandwidth"});
  }
  for (int s : ready) {
    if (matched.count(s) != 0) continue;
    stragglers_[s] = Straggler{Step::kNoRelay, -1, o.iteration};
  }
}

void StretPolicy::Escalate(const StretObservation& o, std::vector<StretDecision>* out) {
  const bool check = o.progress.has_value() && o.iteration % options_.withhold_every == 0;
  bool tune = false;
  for (auto& [s, st] : stragglers_) {
    const bool settled = o.iteration - st.since >= options_.settle_iterations;
    if (st.step == Step::kRelaying && settled && o.communication.count(s) != 0) {
      out->push_back(
          {StretDecision::Kind::kEndRelay, s, st.partner, "the relay did not clear the straggler"});
      st = Straggler{Step::kNoRelay, -1, o.iteration};
      continue;
    }
    if (st.step != Step::kNoRelay || !check) continue;
    if (*o.progress < options_.withhold_threshold) {
      out->push_back({StretDecision::Kind::kWithhold, s, -1,
                      "training gains " + std::to_string(*o.progress) + " points per iteration"});
      st = Straggler{Step::kWithholding, -1, o.iteration};
    } else {
      st = Straggler{Step::kKept, -1, o.iteration};
    }
  }
  for (const auto& [s, st] : stragglers_) tune |= st.step == Step::kKept;
  for (auto it = compute_flagged_.begin(); it != compute_flagged_.end();) {
    it = o.compute.count(it->first) == 0 ? compute_flagged_.erase(it) : std::next(it);
  }
  for (int w : o.compute) {
    compute_flagged_.emplace(w, o.iteration);
    if (o.iteration - compute_flagged_[w] >= options_.settle_iterations) tune = true;
  }
  if (tune && !batch_tuned_ && !o.batches_held) {
    batch_tuned_ = true;
    out->push_back({StretDecision::Kind::kBatchTune, -1, -1,
                    "a straggler neither a relay nor withholding cleared"});
  }
}

}  // namespace straggler
}  // namespace pacer
