// Config's flags, environment twins, checks and agreement, all made from the option tables
// (pacer/config_options.def and pacer/tuning_options.def).
#include "pacer/config.h"

#include <gflags/gflags.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/config_options.h"
#include "common/optimizer_spec.h"
#include "common/split.h"
#include "common/str_cat.h"
#include "pacer/error.h"
#include "pacer/sync_mode.h"

namespace pacer {
namespace {

// The `agreement` column.
enum Agreement { kJobWide, kPerRank };

// The `check` column: what an option's value must be.
struct Check {
  enum Kind { kAny, kAtLeast, kAbove, kOneOf, kParses } kind = kAny;
  double bound = 0;
  const char* choices = "";
  void (*parse)(const std::string&) = nullptr;
};
Check Any() { return {}; }
Check AtLeast(double bound) { return {Check::kAtLeast, bound}; }
Check Above(double bound) { return {Check::kAbove, bound}; }
Check OneOf(const char* choices) { return {Check::kOneOf, 0, choices}; }
Check Parses(void (*parse)(const std::string&)) { return {Check::kParses, 0, "", parse}; }

void ValidSyncMode(const std::string& text) { SyncMode::Starting(text); }
void ValidOptimizer(const std::string& text) { OptimizerSpec::Parse(text); }

template <typename Number>
void Apply(const char* flag, Number value, const Check& check) {
  if (check.kind == Check::kAtLeast && !(value >= check.bound)) {
    throw Error(StrCat("--", flag, "=", value, ": expected >= ", check.bound));
  }
  if (check.kind == Check::kAbove && !(value > check.bound)) {
    throw Error(StrCat("--", flag, "=", value, ": expected > ", check.bound));
  }
}

void Apply(const char* flag, const std::string& value, const Check& check) {
  if (check.kind == Check::kParses) check.parse(value);
  if (check.kind != Check::kOneOf) return;
  const std::vector<std::string> choices = Split(check.choices, '|');
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (value == choices[i]) return;
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  throw Error(StrCat("--", flag, "=", value, ": expected ", list));
}

void Apply(const char*, const std::vector<std::string>&, const Check&) {}

template <typename T>
std::string Text(const T& value) {
  return StrCat(value);
}

std::string Text(const std::vector<std::string>& values) {
  std::string text;
  for (const std::string& value : values) text += (text.empty() ? "" : ";") + value;
  return text;
}

// The environment twins: each flag's default comes from PACER_<NAME> where it is set, so the
// precedence is command line, then environment, then the table's default.
std::string& FirstProblem() {
  static std::string problem;
  return problem;
}

const char* Twin(const char* flag, std::string* name) {
  *name = "PACER_";
  for (const char* c = flag; *c; ++c) *name += static_cast<char>(std::toupper(*c));
  return std::getenv(name->c_str());
}

// The twin's value as a number, left at the default (and a recorded problem) where it is not one.
template <typename Number, typename Parse>
void FromTwin(const char* flag, Number* value, Parse parse, const char* type) {
  std::string name;
  const char* text = Twin(flag, &name);
  if (!text) return;
  size_t used = 0;
  try {
    const Number parsed = parse(text, &used);
    if (text[used] == '\0') {
      *value = parsed;
      return;
    }
  } catch (const std::exception&) {
  }
  if (FirstProblem().empty()) FirstProblem() = name + "=" + text + ": expected " + type;
}

void FromTwin(const char* flag, int* value) {
  FromTwin(
      flag, value, [](const std::string& s, size_t* used) { return std::stoi(s, used); },
      "an integer");
}
void FromTwin(const char* flag, int64_t* value) {
  FromTwin(
      flag, value,
      [](const std::string& s, size_t* used) -> int64_t { return std::stoll(s, used); },
      "an integer");
}
void FromTwin(const char* flag, double* value) {
  FromTwin(
      flag, value, [](const std::string& s, size_t* used) { return std::stod(s, used); },
      "a number");
}
void FromTwin(const char* flag, std::string* value) {
  std::string name;
  if (const char* text = Twin(flag, &name)) *value = text;
}
void FromTwin(const char* flag, std::vector<std::string>* values) {
  std::string name;
  if (const char* text = Twin(flag, &name)) *values = Split(text, ';');
}

// The flags' storage: gflags writes the command line's values into `values`.
struct Flags {
  Config values, defaults;
  // A repeatable option's flag is text (its twin's specs, ';'-separated); every occurrence on
  // the command line counts (gflags keeps only the last).
  struct List {
    std::string text, fallback;
    std::vector<std::string> occurrences;
  };
  std::map<std::string, List> lists;
};

Flags& TheFlags() {
  static Flags flags;
  return flags;
}

template <typename T>
void Register(const char* flag, const char* help, T* value, T* fallback) {
  FromTwin(flag, fallback);
  *value = *fallback;
  gflags::FlagRegisterer(flag, help, __FILE__, value, fallback);
}

void Register(const char* flag, const char* help, std::vector<std::string>* value,
              std::vector<std::string>* fallback) {
  FromTwin(flag, fallback);
  *value = *fallback;
  Flags::List& list = TheFlags().lists[flag];
  list.fallback = list.text = Text(*fallback);
  gflags::FlagRegisterer(flag, help, __FILE__, &list.text, &list.fallback);
}

template <typename T>
void ReadList(const char*, T*) {}

void ReadList(const char* flag, std::vector<std::string>* values) {
  const Flags::List& list = TheFlags().lists.at(flag);
  *values = !list.occurrences.empty() ? list.occurrences : Split(list.text, ';');
}

bool RegisterFlags() {
  Flags& f = TheFlags();
#define PACER_OPTION(type, name, value, agreement, check, help) \
  Register(#name, help, &f.values.name, &f.defaults.name);
#include "pacer/config_options.def"
#undef PACER_OPTION
#define PACER_OPTION(type, name, value, agreement, check, help) \
  Register(#name, help, &f.values.tuning.name, &f.defaults.tuning.name);
#include "pacer/tuning_options.def"
#undef PACER_OPTION
  return true;
}

[[maybe_unused]] const bool kFlagsRegistered = RegisterFlags();

}  // namespace

std::string EnvironmentProblem() { return FirstProblem(); }

void CheckOptions(const Config& c) {
#define PACER_OPTION(type, name, value, agreement, check, help) Apply(#name, c.name, check);
#include "pacer/config_options.def"
#undef PACER_OPTION
#define PACER_OPTION(type, name, value, agreement, check, help) Apply(#name, c.tuning.name, check);
#include "pacer/tuning_options.def"
#undef PACER_OPTION
}

std::vector<std::pair<std::string, std::string>> JobWideOptions(const Config& c) {
  std::vector<std::pair<std::string, std::string>> options;
#define PACER_OPTION(type, name, value, agreement, check, help) \
  if (agreement == kJobWide) options.emplace_back(#name, Text(c.name));
#include "pacer/config_options.def"
#undef PACER_OPTION
#define PACER_OPTION(type, name, value, agreement, check, help) \
  if (agreement == kJobWide) options.emplace_back(#name, Text(c.tuning.name));
#include "pacer/tuning_options.def"
#undef PACER_OPTION
  return options;
}

Config Config::FromFlags() {
  Config c = TheFlags().values;
#define PACER_OPTION(type, name, value, agreement, check, help) ReadList(#name, &c.name);
#include "pacer/config_options.def"
#undef PACER_OPTION
  return c;
}

Config Config::ParseCommandLine(int* argc, char*** argv) {
  for (auto& [flag, list] : TheFlags().lists) {
    list.occurrences.clear();
    for (int i = 1; i < *argc; ++i) {
      const std::string arg = (*argv)[i];
      for (const std::string& name : {"--" + flag, "-" + flag}) {
        std::string value;
        if (arg.rfind(name + "=", 0) == 0) value = arg.substr(name.size() + 1);
        if (arg == name && i + 1 < *argc) value = (*argv)[i + 1];
        if (!value.empty()) list.occurrences.push_back(value);
      }
    }
  }
  gflags::ParseCommandLineFlags(argc, argv, /*remove_flags=*/true);
  return FromFlags();
}

}  // namespace pacer
