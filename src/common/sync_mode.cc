#include "pacer/sync_mode.h"

#include <cstdlib>
#include <sstream>

#include "pacer/error.h"

namespace pacer {
namespace {

[[noreturn]] void Bad(const std::string& text, const std::string& why) {
  throw Error("--sync=" + text + ": " + why +
              " (expected bsp, asp, ssp:S, backup:B, dynsgd, consgd, consgd:C or epsp:S)");
}

// The integer after "name:", at least `min`.
int IntArgument(const std::string& text, size_t colon, int min) {
  const std::string arg = text.substr(colon + 1);
  char* end = nullptr;
  long v = std::strtol(arg.c_str(), &end, 10);
  if (arg.empty() || *end != '\0' || v < min || v > 1000000) {
    Bad(text, "'" + arg + "' is not an integer >= " + std::to_string(min));
  }
  return static_cast<int>(v);
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

}  // namespace pacer
