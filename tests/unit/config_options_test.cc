// The option tables (pacer/config_options.def, pacer/tuning_options.def) and what
// src/common/config.cc makes of them: a flag per row with the row's default and help, the checks,
// the agreement, and a repeatable flag whose every occurrence counts.
#include "common/config_options.h"

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../common/error_of.h"
#include "pacer/config.h"

namespace pacer {
namespace {

using ::testing::ElementsAre;

std::string Default(const std::string& flag) {
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(flag.c_str(), &info)) return "(no flag --" + flag + ")";
  return info.default_value;
}

// A default as gflags prints it: a double with %.17g, a list as its ';'-joined text.
std::string Printed(const std::string& value) { return value; }
std::string Printed(const std::vector<std::string>& values) {
  std::string text;
  for (const std::string& value : values) text += (text.empty() ? "" : ";") + value;
  return text;
}
std::string Printed(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}
std::string Printed(int value) { return std::to_string(value); }
std::string Printed(int64_t value) { return std::to_string(value); }

TEST(ConfigOptionsTest, EveryRowIsAFlagWithTheRowsDefault) {
  const Config defaults;
  int rows = 0;
#define PACER_OPTION(type, name, value, agreement, check, help) \
  ++rows;                                                       \
  EXPECT_EQ(Default(#name), Printed(defaults.name)) << #name;
#include "pacer/config_options.def"
#undef PACER_OPTION
#define PACER_OPTION(type, name, value, agreement, check, help) \
  ++rows;                                                       \
  EXPECT_EQ(Default(#name), Printed(defaults.tuning.name)) << #name;
#include "pacer/tuning_options.def"
#undef PACER_OPTION
  EXPECT_EQ(rows, 45);
}

TEST(ConfigOptionsTest, JobWideRowsAreTheAgreedOnes) {
  Config config;
  config.inject = {"worker:0:compute=2x", "server:0:service=3x"};
  config.skip_eps = 0.25;
  std::set<std::string> names;
  std::map<std::string, std::string> values;
  for (const auto& [name, value] : JobWideOptions(config)) {
    names.insert(name);
    values[name] = value;
  }
  EXPECT_EQ(values["inject"], "worker:0:compute=2x;server:0:service=3x");
  EXPECT_EQ(values["skip_eps"], "0.25");
  EXPECT_EQ(names, (std::set<std::string>{"servers",
                                          "server_placement",
                                          "transport",
                                          "sync",
                                          "optimizer",
                                          "partition_bytes",
                                          "inject",
                                          "inject_seed",
                                          "migrate_every",
                                          "balance",
                                          "auto_window",
                                          "auto_group_gap_ms",
                                          "comm_policy",
                                          "predicted_policy",
                                          "shrink_margin",
                                          "skip_eps",
                                          "skip_pull_eps",
                                          "server_bandwidth",
                                          "heartbeat_timeout_s",
                                          "on_worker_loss"}));
}

TEST(ConfigOptionsTest, EachRowsCheckNamesTheFlag) {
  auto error = [](void (*set)(Config&)) {
    Config config;
    set(config);
    return testing::ErrorOf([&] { CheckOptions(config); });
  };
  EXPECT_EQ(error([](Config&) {}), "(no error)");
  EXPECT_EQ(error([](Config& c) { c.reduce_device = "tpu"; }),
            "--reduce_device=tpu: expected cpu or cuda");
  EXPECT_EQ(error([](Config& c) { c.server_threads = -1; }), "--server_threads=-1: expected >= 0");
  EXPECT_EQ(error([](Config& c) { c.withhold_every = 0; }), "--withhold_every=0: expected > 0");
  EXPECT_EQ(error([](Config& c) { c.tuning.read_threads = -2; }),
            "--read_threads=-2: expected >= 0");
  EXPECT_THAT(error([](Config& c) { c.optimizer = "rmsprop"; }), ::testing::HasSubstr("rmsprop"));
}

TEST(ConfigOptionsTest, EveryOccurrenceOfARepeatableFlagCounts) {
  std::vector<std::string> args = {"test", "--inject=worker:0:compute=2x", "--inject",
                                   "server:0:service=3x", "--skip_eps=0.5"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  int argc = static_cast<int>(argv.size());
  char** list = argv.data();
  const Config parsed = Config::ParseCommandLine(&argc, &list);
  EXPECT_THAT(parsed.inject, ElementsAre("worker:0:compute=2x", "server:0:service=3x"));
  EXPECT_EQ(parsed.skip_eps, 0.5);
  EXPECT_EQ(argc, 1);

  // A later parse starts afresh (gflags' own flags keep their last value).
  std::vector<std::string> reset = {"test", "--inject=", "--skip_eps=0.05"};
  argv.clear();
  for (std::string& arg : reset) argv.push_back(arg.data());
  argc = static_cast<int>(argv.size());
  list = argv.data();
  EXPECT_TRUE(Config::ParseCommandLine(&argc, &list).inject.empty());
}

}  // namespace
}  // namespace pacer
