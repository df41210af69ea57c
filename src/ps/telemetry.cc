#include "ps/telemetry.h"

#include <cstring>
#include <type_traits>

namespace pacer {

static_assert(std::is_trivially_copyable<IterationReport>::value, "sent as bytes");
static_assert(std::is_trivially_copyable<ServerReport>::value, "sent as bytes");

template <typename Report>
bool DecodeReport(const Buffer& payload, Report* report, std::string* error) {
  if (payload.size() != sizeof(Report)) {
    *error = "a report of " + std::to_string(payload.size()) + " bytes, expected " +
             std::to_string(sizeof(Report));
    return false;
  }
  std::memcpy(report, payload.data(), sizeof(Report));
  return true;
}

template bool DecodeReport(const Buffer&, IterationReport*, std::string*);
template bool DecodeReport(const Buffer&, ServerReport*, std::string*);

}  // namespace pacer
