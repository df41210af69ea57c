#include "common/fault_spec.h"

#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <utility>

#include "common/split.h"
#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// Its errors are std::invalid_argument, which the callers' pacer::Error handling turns into a
// message naming the flag.
[[noreturn]] void Bad(const std::string& text, const std::string& why) {
  throw std::invalid_argument("--inject=" + text + ": " + why);
}

using Units = std::initializer_list<std::pair<const char*, double>>;

// A number at least 0 followed by one of `units` (name, factor); returns value x factor. Throws
// std::invalid_argument "'part' is not WHAT".
double WithUnit(const std::string& part, Units units, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(part.c_str(), &end);
  if (end != part.c_str() && v >= 0) {
    const std::string unit(end);
    for (const auto& [name, factor] : units) {
      if (unit == name) return v * factor;
    }
  }
  throw std::invalid_argument("'" + part + "' is not " + what);
}

// The same for a part of an --inject spec: the error names the spec.
double NumberWithUnit(const std::string& text, const std::string& part, Units units,
                      const char* what) {
  try {
    return WithUnit(part, units, what);
  } catch (const std::invalid_argument& e) {
    Bad(text, e.what());
  }
}

double Duration(const std::string& text, const std::string& part) {
  return NumberWithUnit(text, part, {{"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"min", 60}},
                        "a duration such as 2ms, 150us or 60s");
}

double Rate(const std::string& text, const std::string& part) {
  try {
    return ParseRate(part);
  } catch (const std::invalid_argument& e) {
    Bad(text, e.what());
  }
}

double Multiplier(const std::string& text, const std::string& part) {
  const double m = NumberWithUnit(text, part, {{"x", 1}}, "a multiplier such as 3x");
  if (m < 1) Bad(text, "'" + part + "' slows nothing down: multipliers are at least 1x");
  return m;
}

int64_t Count(const std::string& text, const std::string& part) {
  char* end = nullptr;
  const long long v = std::strtoll(part.c_str(), &end, 10);
  if (part.empty() || *end != '\0' || v < 0) Bad(text, "'" + part + "' is not a count");
  return v;
}

FaultSpec::Node NodeOf(const std::string& text, const std::string& part, bool link) {
  FaultSpec::Node n;
  if (part == "*") return n;
  std::string digits = part;
  n.by = FaultSpec::Node::By::kRank;
  if (link && !part.empty() && (part[0] == 'w' || part[0] == 's')) {
    n.by = part[0] == 'w' ? FaultSpec::Node::By::kWorker : FaultSpec::Node::By::kServer;
    digits = part.substr(1);
  }
  char* end = nullptr;
  const long v = std::strtol(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || v < 0) {
    Bad(text, "'" + part + "' is not " +
                  (link ? "a link end (a rank, wN, sN or *)" : "a role index (a number or *)"));
  }
  n.number = static_cast<int>(v);
  return n;
}

// Splitmix64: a reproducible uniform draw in [0, 1) per (seed, node, iteration).
double Uniform(uint64_t seed, int node, int64_t iteration) {
  uint64_t z = seed ^ (static_cast<uint64_t>(node) * 0x9E3779B97F4A7C15ULL) ^
               (static_cast<uint64_t>(iteration) * 0xD1B54A32D192ED03ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0;
}

}  // namespace

double ParseRate(const std::string& text) {
  const double rate = WithUnit(text,
                               {{"B/s", 1},
                                {"KB/s", 1e3},
                                {"MB/s", 1e6},
                                {"GB/s", 1e9},
                                {"KiB/s", 1024.0},
                                {"MiB/s", 1048576.0},
                                {"GiB/s", 1073741824.0}},
                               "a rate such as 100MB/s");
  if (!(rate > 0)) throw std::invalid_argument("a rate must be positive, not '" + text + "'");
  return rate;
}

namespace {

// trace:PATH[:from=N][:scale=F][:to=fastest|median][:workers=A+B+...] and
// spread:PATH:job=K[:from=N].
FaultSpec TraceSpec(const std::string& text) {
  const bool spread = text.rfind("spread:", 0) == 0;
  const char* grammar = spread ? "expected spread:PATH:job=K[:from=N]"
                               : "expected trace:PATH[:from=N][:scale=F][:to=fastest|median]"
                                 "[:workers=A+B+...]";
  const std::vector<std::string> parts = Split(text.substr(text.find(':') + 1), ':');
  if (parts.empty()) Bad(text, grammar);
  FaultSpec f;
  int64_t job = -1;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].rfind("from=", 0) == 0) {
      f.trace_from = Count(text, parts[i].substr(5));
    } else if (spread && parts[i].rfind("job=", 0) == 0) {
      job = Count(text, parts[i].substr(4));
    } else if (!spread && parts[i] == "to=median") {
      f.trace_to_median = true;
    } else if (!spread && parts[i] == "to=fastest") {
      f.trace_to_median = false;
    } else if (!spread && parts[i].rfind("workers=", 0) == 0) {
      for (const std::string& worker : Split(parts[i].substr(8), '+')) {
        f.trace_workers.push_back(static_cast<int>(Count(text, worker)));
      }
    } else if (!spread && parts[i].rfind("scale=", 0) == 0) {
      const std::string scale = parts[i].substr(6);
      char* end = nullptr;
      f.trace_scale = std::strtod(scale.c_str(), &end);
      if (scale.empty() || *end != '\0' || !(f.trace_scale > 0)) {
        Bad(text, "'" + scale + "' is not a positive scale");
      }
    } else {
      Bad(text, "'" + parts[i] + "' is not " +
                    (spread ? "a spread option: job=K or from=N"
                            : "a trace option: from=N, scale=F, to=fastest, to=median or "
                              "workers=A+B+..."));
    }
  }
  if (spread && job < 0) Bad(text, grammar);
  try {
    if (spread) {
      f.variation =
          std::make_shared<const JobVariation>(JobVariation::Load(parts[0], static_cast<int>(job)));
    } else {
      f.trace = std::make_shared<const ComputeTrace>(ComputeTrace::Load(parts[0]));
    }
  } catch (const Error& e) {
    Bad(text, e.what());
  }
  for (int worker : f.trace_workers) {
    if (worker >= f.trace->workers()) {
      Bad(text, StrCat("worker ", worker, " is not in the trace (workers 0..",
                       f.trace->workers() - 1, ")"));
    }
  }
  return f;
}

}  // namespace

FaultSpec FaultSpec::Parse(const std::string& text) {
  if (text.rfind("trace:", 0) == 0 || text.rfind("spread:", 0) == 0) return TraceSpec(text);
  FaultSpec f;
  const size_t at = text.find('@');
  const std::string body = text.substr(0, at);
  const size_t first = body.find(':');
  const size_t last = body.rfind(':');
  if (first == std::string::npos || first == last) {
    Bad(text, "expected TARGET:EFFECT, as in worker:3:compute=3x or link:4->1:bw=100MB/s");
  }
  const std::string kind = body.substr(0, first);
  const std::string who = body.substr(first + 1, last - first - 1);
  const std::string effect = body.substr(last + 1);
  if (kind == "worker" || kind == "server") {
    f.target = kind == "worker" ? Target::kWorker : Target::kServer;
    f.node = NodeOf(text, who, false);
    if (f.node.by == Node::By::kRank) {
      f.node.by = f.target == Target::kWorker ? Node::By::kWorker : Node::By::kServer;
    }
  } else if (kind == "link") {
    f.target = Target::kLink;
    const size_t arrow = who.find("->");
    if (arrow == std::string::npos) Bad(text, "'" + who + "' is not a link FROM->TO");
    f.from = NodeOf(text, who.substr(0, arrow), true);
    f.to = NodeOf(text, who.substr(arrow + 2), true);
  } else {
    Bad(text, "'" + kind + "' is not a target: worker, server or link");
  }

  const size_t eq = effect.find('=');
  const std::string name = effect.substr(0, eq),
                    value = eq == std::string::npos ? "" : effect.substr(eq + 1);
  if (eq == std::string::npos) Bad(text, "'" + effect + "' is not an effect NAME=VALUE");
  if (name == "compute" && f.target == Target::kWorker) {
    f.effect = Effect::kCompute;
    f.value = Multiplier(text, value);
  } else if (name == "service" && f.target == Target::kServer) {
    f.effect = Effect::kService;
    f.value = Multiplier(text, value);
  } else if (name == "bw" && f.target == Target::kLink) {
    f.effect = Effect::kBandwidth;
    f.value = Rate(text, value);
  } else if (name == "rate" && f.target == Target::kServer) {
    f.effect = Effect::kRate;
    f.value = Rate(text, value);
  } else if (name == "delay" && f.target == Target::kLink) {
    f.effect = Effect::kDelay;
    f.value = Duration(text, value);
  } else {
    Bad(text, "'" + name + "' is not an effect of a " + kind +
                  " (workers: compute, servers: service and rate, links: bw and delay)");
  }

  if (at == std::string::npos) return f;
  const std::string schedule = text.substr(at + 1);
  const size_t seq = schedule.find('=');
  const std::string sname = schedule.substr(0, seq);
  const std::string svalue = seq == std::string::npos ? "" : schedule.substr(seq + 1);
  const size_t colon = svalue.find(':');
  if (sname == "p" && seq != std::string::npos) {
    f.schedule = Schedule::kProbability;
    char* end = nullptr;
    f.probability = std::strtod(svalue.c_str(), &end);
    if (svalue.empty() || *end != '\0' || !(f.probability >= 0 && f.probability <= 1)) {
      Bad(text, "'" + svalue + "' is not a probability between 0 and 1");
    }
  } else if (sname == "period" && colon != std::string::npos) {
    f.schedule = Schedule::kPeriod;
    f.period = Count(text, svalue.substr(0, colon));
    f.slow = Count(text, svalue.substr(colon + 1));
    if (f.period == 0 || f.slow > f.period) {
      Bad(text, "period=B:A needs 0 < B and A <= B (slow for A of every B iterations)");
    }
  } else if (sname == "window" && colon != std::string::npos) {
    f.schedule = Schedule::kWindow;
    f.window_start_s = Duration(text, svalue.substr(0, colon));
    f.window_length_s = Duration(text, svalue.substr(colon + 1));
  } else {
    Bad(text, "'" + schedule + "' is not a schedule: p=P, period=B:A or window=START:LENGTH");
  }
  return f;
}

bool FaultSpec::Names(Target role, int index) const {
  if (target != role) return false;
  return node.by == Node::By::kAny || node.number == index;
}

double ActiveMultiplier(const std::vector<FaultSpec>& faults, FaultSpec::Target role,
                        FaultSpec::Effect effect, int index, int64_t iteration, double time_s,
                        uint64_t seed) {
  double multiplier = 1;
  for (const FaultSpec& f : faults) {
    if (f.effect == effect && f.Names(role, index) && f.ActiveAt(iteration, time_s, index, seed)) {
      multiplier *= f.MultiplierAt(index, iteration, seed);
    }
  }
  return multiplier;
}

double ActiveServiceRate(const std::vector<FaultSpec>& faults, int index, double time_s,
                         uint64_t seed) {
  double rate = 0;
  for (const FaultSpec& f : faults) {
    if (f.effect == FaultSpec::Effect::kRate && f.Names(FaultSpec::Target::kServer, index) &&
        f.ActiveAt(0, time_s, index, seed) && (rate == 0 || f.value < rate)) {
      rate = f.value;
    }
  }
  if (rate == 0) return 0;
  return rate / ActiveMultiplier(faults, FaultSpec::Target::kServer, FaultSpec::Effect::kService,
                                 index, 0, time_s, seed);
}

bool FaultSpec::ActiveAt(int64_t iteration, double time_s, int node, uint64_t seed) const {
  switch (schedule) {
    case Schedule::kAlways:
      return true;
    case Schedule::kProbability:
      return Uniform(seed, node, iteration) < probability;
    case Schedule::kPeriod:
      return iteration % period >= period - slow;
    case Schedule::kWindow:
      return time_s >= window_start_s && time_s < window_start_s + window_length_s;
  }
  return false;
}

double FaultSpec::MultiplierAt(int index, int64_t iteration, uint64_t seed) const {
  const int64_t at = trace_from + iteration;
  if (trace) {
    const double reference = trace_to_median ? trace->median() : trace->FastestAt(at);
    const int worker = trace_workers.empty()
                           ? index % trace->workers()
                           : trace_workers[index % static_cast<int>(trace_workers.size())];
    return trace_scale * trace->TimeAt(worker, at) / reference;
  }
  if (variation) {
    // A lognormal of mean 1 and coefficient of variation cv: sigma^2 = ln(1 + cv^2), mu =
    // -sigma^2 / 2; its normal drawn by Box-Muller from two uniforms of (seed, index, iteration).
    const double cv = variation->CvAt(at);
    const double sigma2 = std::log1p(cv * cv);
    const double u1 = 1 - Uniform(seed, index, iteration);  // in (0, 1]
    const double u2 = Uniform(~seed, index, iteration);
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    return std::exp(std::sqrt(sigma2) * z - sigma2 / 2);
  }
  return value;
}

}  // namespace pacer
