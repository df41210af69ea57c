#include "pacer/sync_mode.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/split.h"
#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

[[noreturn]] void Bad(const std::string& text, const std::string& why) {
  throw Error(
      "--sync=" + text + ": " + why +
      " (expected bsp, asp, ssp:S, backup:B, dynsgd, consgd, consgd:C, epsp:S or groups:S:G)");
}

// An integer of `text`, at least `min`.
int Integer(const std::string& text, const std::string& arg, int min) {
  char* end = nullptr;
  long v = std::strtol(arg.c_str(), &end, 10);
  if (arg.empty() || *end != '\0' || v < min || v > 1000000) {
    Bad(text, "'" + arg + "' is not an integer >= " + std::to_string(min));
  }
  return static_cast<int>(v);
}

// The integer after "name:", at least `min`.
int IntArgument(const std::string& text, size_t colon, int min) {
  return Integer(text, text.substr(colon + 1), min);
}

// "S:G" of groups:S:G.
void ParseGroups(const std::string& text, size_t colon, SyncMode* m) {
  const size_t second = text.find(':', colon + 1);
  if (second == std::string::npos) {
    Bad(text, "groups needs its staleness bound and its groups, as in groups:2:0+1+2/3");
  }
  m->staleness = Integer(text, text.substr(colon + 1, second - colon - 1), 0);
  std::vector<int> seen;
  for (const std::string& group : Split(text.substr(second + 1), '/')) {
    m->groups.emplace_back();
    for (const std::string& worker : Split(group, '+')) {
      const int w = Integer(text, worker, 0);
      if (std::find(seen.begin(), seen.end(), w) != seen.end()) {
        Bad(text, StrCat("worker ", w, " is in two groups"));
      }
      seen.push_back(w);
      m->groups.back().push_back(w);
    }
  }
  if (m->groups.empty()) Bad(text, "no groups after the staleness bound");
}

}  // namespace

SyncMode SyncMode::Parse(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  const bool has_arg = colon != std::string::npos;
  SyncMode m;
  if (name == "bsp" || name == "asp" || name == "dynsgd") {
    if (has_arg) Bad(text, name + " takes no argument");
    m.kind = name == "bsp" ? Kind::kBsp : name == "asp" ? Kind::kAsp : Kind::kDynSgd;
  } else if (name == "ssp" || name == "epsp") {
    if (!has_arg) Bad(text, name + " needs its staleness bound, as in " + name + ":2");
    m.kind = name == "ssp" ? Kind::kSsp : Kind::kEpsp;
    m.staleness = IntArgument(text, colon, 0);
  } else if (name == "backup") {
    if (!has_arg) Bad(text, "backup needs its number of backup workers, as in backup:1");
    m.kind = Kind::kBackup;
    m.backups = IntArgument(text, colon, 0);
  } else if (name == "groups") {
    if (!has_arg)
      Bad(text, "groups needs its staleness bound and its groups, as in groups:2:0+1/2");
    m.kind = Kind::kGroups;
    ParseGroups(text, colon, &m);
  } else if (name == "consgd") {
    m.kind = Kind::kConSgd;
    if (has_arg) {
      const std::string arg = text.substr(colon + 1);
      char* end = nullptr;
      m.scale = std::strtod(arg.c_str(), &end);
      if (arg.empty() || *end != '\0' || !(m.scale > 0)) {
        Bad(text, "'" + arg + "' is not a positive scale");
      }
    }
  } else {
    Bad(text, "unknown mode '" + name + "'");
  }
  return m;
}

SyncMode SyncMode::Starting(const std::string& sync) {
  return sync == "auto" ? SyncMode() : Parse(sync);
}

std::string SyncMode::ToString() const {
  switch (kind) {
    case Kind::kBsp:
      return "bsp";
    case Kind::kAsp:
      return "asp";
    case Kind::kSsp:
      return "ssp:" + std::to_string(staleness);
    case Kind::kEpsp:
      return "epsp:" + std::to_string(staleness);
    case Kind::kBackup:
      return "backup:" + std::to_string(backups);
    case Kind::kDynSgd:
      return "dynsgd";
    case Kind::kGroups: {
      std::string spelled = "groups:" + std::to_string(staleness) + ":";
      for (size_t g = 0; g < groups.size(); ++g) {
        for (size_t i = 0; i < groups[g].size(); ++i) {
          spelled += (i > 0 ? "+" : g > 0 ? "/" : "") + std::to_string(groups[g][i]);
        }
      }
      return spelled;
    }
    case Kind::kConSgd: {
      if (scale == 0) return "consgd";
      std::ostringstream s;
      s.precision(17);
      s << "consgd:" << scale;
      return s.str();
    }
  }
  return "?";
}

int SyncMode::GroupOf(int worker) const {
  for (size_t g = 0; g < groups.size(); ++g) {
    if (std::find(groups[g].begin(), groups[g].end(), worker) != groups[g].end()) {
      return static_cast<int>(g);
    }
  }
  return -1;
}

void SyncMode::CheckFits(int num_workers) const {
  if (kind == Kind::kBackup && backups >= num_workers) {
    throw Error(StrCat(ToString(), ": ", backups, " backup workers leave none of the ", num_workers,
                       " workers to wait for"));
  }
  if (kind != Kind::kGroups) return;
  std::vector<bool> in_a_group(static_cast<size_t>(std::max(num_workers, 0)), false);
  for (const std::vector<int>& group : groups) {
    for (int w : group) {
      if (w >= num_workers) {
        throw Error(StrCat(ToString(), ": worker ", w, " is not among the job's ", num_workers,
                           " workers"));
      }
      in_a_group[static_cast<size_t>(w)] = true;
    }
  }
  const auto missing = std::find(in_a_group.begin(), in_a_group.end(), false);
  if (missing != in_a_group.end()) {
    throw Error(StrCat(ToString(), ": worker ", missing - in_a_group.begin(), " of ", num_workers,
                       " is in no group"));
  }
}

}  // namespace pacer
