// The training cases the suites share (training.h): the sync modes and the switches and moves
// each is run under, the session options each needs, and the distance between two runs' results.
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "training.h"

namespace pacer {
namespace testing {

double RelativeDistance(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * static_cast<double>(a[i] - b[i]);
    norm += b[i] * static_cast<double>(b[i]);
  }
  return std::sqrt(diff / norm);
}

std::vector<TrainingCase> TrainingCases() {
  std::vector<TrainingCase> cases;
  for (const char* mode : {"bsp", "asp", "ssp:2", "backup:1", "dynsgd", "consgd"}) {
    std::string name = std::string("Trains_") + mode;
    for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    cases.push_back({name, mode, {}});
  }
  TrainingCase reference{"BspWithASlowWorkerEqualsASingleProcessRun", "bsp", {}};
  reference.options.check_reference = true;
  reference.options.slow_worker = 0;
  reference.options.slow_ms = 3;
  TrainingCase ssp{"SspKeepsTheClockGapWithinTwoWithASlowWorker", "ssp:2", {}};
  ssp.options.staleness_bound = 2;
  ssp.options.slow_worker = 0;
  ssp.options.slow_ms = 4;
  TrainingCase change{"SwitchFromBspToAspAppliesEveryGradientOnce", "bsp", {}};
  change.options.iterations = 200;
  change.options.switch_to = "asp";
  change.options.switch_after_ms = 40;
  cases.push_back(reference);
  cases.push_back(ssp);
  cases.push_back(change);
  // Falcon's tasks: BSP computes each worker's own; EPSP(0) moves the slow worker's to the
  // others and still ends as BSP does; EPSP(2) keeps SSP's bound.
  for (const char* mode : {"bsp", "epsp:0"}) {
    TrainingCase tasks{mode[0] == 'b' ? "BspOverTasksEqualsASingleProcessRun"
                                      : "EpspZeroWithASlowWorkerEqualsASingleProcessRun",
                       mode,
                       {}};
    tasks.options.tasks_per_worker = 8;
    tasks.options.check_reference = true;
    tasks.options.slow_worker = 0;
    tasks.options.slow_ms = 4;
    cases.push_back(tasks);
  }
  TrainingCase slack{"EpspTwoKeepsTheClockGapWithinTwoWithASlowWorker", "epsp:2", {}};
  slack.options.tasks_per_worker = 8;
  slack.options.staleness_bound = 2;
  slack.options.slow_worker = 0;
  slack.options.slow_ms = 4;
  cases.push_back(slack);
  // Key ranges move while the workers train: BSP ends as a single-process run does, and in every
  // mode each key applies every gradient once.
  TrainingCase moved_bsp{"BspWithMigrationsEqualsASingleProcessRun", "bsp", {}};
  moved_bsp.options.check_reference = true;
  moved_bsp.options.migrations = 12;
  cases.push_back(moved_bsp);
  // Relays turned on and off while the workers train: BSP and EPSP(0) over tasks end as a
  // single-process run does, and under SSP each key applies every gradient once.
  for (const char* mode : {"bsp", "epsp:0", "ssp:2"}) {
    const std::string name = mode[0] == 'b'   ? "BspWithRelaysEqualsASingleProcessRun"
                             : mode[0] == 'e' ? "EpspZeroWithRelaysEqualsASingleProcessRun"
                                              : "RelaysUnderSspLoseNoUpdate";
    TrainingCase relayed{name, mode, {}};
    relayed.options.relays = 8;
    relayed.options.check_reference = mode[0] != 's';
    relayed.options.tasks_per_worker = mode[0] == 'e' ? 8 : 0;
    relayed.options.slow_worker = 0;
    relayed.options.slow_ms = 4;
    cases.push_back(relayed);
  }
  for (const char* mode : {"asp", "ssp:2"}) {
    TrainingCase moved{
        std::string("MigrationsLoseNoUpdate_") + (mode[0] == 'a' ? "asp" : "ssp"), mode, {}};
    moved.options.migrations = 12;
    cases.push_back(moved);
  }
  return cases;
}

Config TrainingConfig(Config base, const TrainingCase& c) {
  base.sync = c.mode;
  base.optimizer = "sgd:lr=" + std::to_string(c.options.lr);
  base.partition_bytes = c.options.partition_bytes;
  base.scheduling_credit = 2;
  base.timeout_s = 60;
  return base;
}

}  // namespace testing
}  // namespace pacer
