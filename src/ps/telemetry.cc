#include "ps/telemetry.h"

#include <cstring>
#include <type_traits>

namespace pacer {

static_assert(std::is_trivially_copyable<IterationReport>::value, "sent as bytes");

Buffer EncodeReport(const IterationReport& report) { return Buffer::Copy(&report, sizeof(report)); }

bool DecodeReport(const Buffer& payload, IterationReport* report, std::string* error) {
  if (payload.size() != sizeof(IterationReport)) {
    *error = "an iteration report of " + std::to_string(payload.size()) + " bytes, expected " +
             std::to_string(sizeof(IterationReport));
    return false;
  }
  std::memcpy(report, payload.data(), sizeof(IterationReport));
  return true;
}

}  // namespace pacer
