#include "scenario_presets.h"

#include <gflags/gflags.h>
#include <pacer/error.h>
#include <pacer/sync_mode.h>

#include <cctype>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

DEFINE_string(traces, PACER_TRACES_DIR,
              "the production traces S8 replays (pai-2020-minibatch/ of ../shared/traces)");

namespace pacer {
namespace bench {
namespace {

// S8's replays of PAI's job 1 from its iteration 1700 (worker 6 straggles from 1811, clock 111)
// and of job 2 (steady heterogeneity); S8-small is job 1's workers 3 to 6 from iteration 1780, so
// that a short run of 4 workers sees worker 3 turn slow at clock 31.
std::vector<std::string> ProductionReplay(const std::string& scenario) {
  const std::string dir = FLAGS_traces + "/pai-2020-minibatch/";
  if (scenario == "S8") return {"trace:" + dir + "job_1_norm.csv:from=1700"};
  if (scenario == "S8-job2") return {"trace:" + dir + "job_2_norm.csv"};
  return {"trace:" + dir + "job_1_norm.csv:from=1780:workers=3+4+5+6"};
}

// S3's network where --link-mb-s leaves it open.
constexpr double kDefaultS3LinkBytesPerSecond = 5e6;

std::string Bandwidth(double bytes_per_s) {
  return ":bw=" + std::to_string(static_cast<long long>(bytes_per_s)) + "B/s";
}

// Both directions of the link between two ends ("w0", "s1").
void Cap(const std::string& a, const std::string& b, double bytes_per_s,
         std::vector<std::string>* specs) {
  specs->push_back("link:" + a + "->" + b + Bandwidth(bytes_per_s));
  specs->push_back("link:" + b + "->" + a + Bandwidth(bytes_per_s));
}

}  // namespace

std::vector<std::string> ScenarioInjects(const std::string& scenario, const JobShape& job) {
  const bool s3 = scenario == "S3" || scenario == "S3-all" || scenario == "S3-two";
  const int slow_links = scenario == "S3-two" ? 2 : 1;  // the workers whose server links are slow
  const double rate =
      job.link_bytes_per_s > 0 ? job.link_bytes_per_s : (s3 ? kDefaultS3LinkBytesPerSecond : 0);
  if (s3 && !(job.slow_link_share > 0 && job.slow_link_share <= 1)) {
    throw std::invalid_argument("--slow-link-share=" + std::to_string(job.slow_link_share) +
                                ": expected a share of the links' rate in (0, 1]");
  }
  std::vector<std::string> specs;
  if (rate > 0) {
    for (int w = 0; w < job.workers; ++w) {
      for (int s = 0; s < job.servers; ++s) {
        Cap("w" + std::to_string(w), "s" + std::to_string(s),
            s3 && w < slow_links ? rate * job.slow_link_share : rate, &specs);
      }
    }
  }
  if (scenario == "S3-all") {
    for (int w = 1; w < job.workers; ++w)
      Cap("w0", "w" + std::to_string(w), rate * job.slow_link_share, &specs);
  }
  if (s3 || scenario == "S6") return specs;
  if (scenario == "S8" || scenario == "S8-job2" || scenario == "S8-small") {
    return ProductionReplay(scenario);
  }
  if (scenario == "S7") {
    if (job.workers < 2 || !(job.stage_s > 0)) {
      throw std::invalid_argument("--scenario=S7: needs 2 workers or more and a window > 0 s");
    }
    auto window = [&](double start) {
      return "@window=" + std::to_string(start * job.stage_s) + "s:" + std::to_string(job.stage_s) +
             "s";
    };
    const double slow = (rate > 0 ? rate : kDefaultS3LinkBytesPerSecond) * job.slow_link_share;
    specs.push_back("worker:0:compute=3x" + window(0));
    for (int s = 0; s < job.servers; ++s) {
      const std::string server = "s" + std::to_string(s);
      specs.push_back("link:w1->" + server + Bandwidth(slow) + window(0.75));
      specs.push_back("link:" + server + "->w1" + Bandwidth(slow) + window(0.75));
    }
    specs.push_back("server:0:service=3x" + window(2));
    return specs;
  }
  if (scenario == "S1")
    specs.push_back("worker:0:compute=3x");
  else if (scenario == "S2")
    specs.push_back("worker:*:compute=3x@p=0.1");
  else if (scenario == "S4")
    specs.push_back("server:0:service=3x@window=" + job.server_window);
  else if (scenario == "S5")
    specs.push_back("worker:0:compute=3x@period=200:50");
  else
    throw std::invalid_argument("--scenario=" + scenario +
                                ": expected S1 to S7, S3-all, S3-two, S8, S8-job2 or S8-small");
  return specs;
}

void ApplyPolicy(const std::string& policy, Config* config) {
  if (policy.empty() || policy.back() == '+') {
    throw std::invalid_argument("--policy=" + policy + ": an empty policy");
  }
  config->sync = "bsp";
  // Split at '+', except within a groups mode, whose groups join their workers with '+'
  // (groups:2:0+1/2+3): a part that starts with a digit continues the groups before it.
  std::vector<std::string> parts;
  std::istringstream joined(policy);
  for (std::string piece; std::getline(joined, piece, '+');) {
    const bool continues = !parts.empty() && parts.back().rfind("groups:", 0) == 0 &&
                           !piece.empty() && std::isdigit(static_cast<unsigned char>(piece[0]));
    if (continues) {
      parts.back() += "+" + piece;
    } else {
      parts.push_back(piece);
    }
  }
  for (const std::string& part : parts) {
    if (part == "sas") {
      config->balance = "sas";
    } else if (part == "stret") {
      config->comm_policy = "stret";
    } else if (part == "sms") {
      config->predicted_policy = "sms";
    } else if (part == "strn") {
      config->sync = "auto";
    } else if (part == "auto") {  // every mitigation, each for its kind of straggler
      config->sync = "auto";
      config->comm_policy = "stret";
      config->predicted_policy = "sms";
      config->balance = "sas";
    } else {
      try {
        config->sync = SyncMode::Parse(part).ToString();
      } catch (const Error& e) {
        throw std::invalid_argument("--policy=" + policy + ": '" + part +
                                    "' is not sas, stret, sms, strn, auto or a sync mode (" +
                                    e.what() + ")");
      }
    }
  }
}

}  // namespace bench
}  // namespace pacer
