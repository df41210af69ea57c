#include "ps/messages/telemetry.h"

#include <cstring>
#include <type_traits>

namespace pacer {

static_assert(std::is_trivially_copyable<IterationReport>::value, "sent as bytes");
// IterationStats' 20 fields, partner and accuracy, 8 bytes each: no padding to send.
static_assert(sizeof(IterationReport) == 22 * 8, "a field that is not 8 bytes wide pads");
static_assert(std::is_trivially_copyable<ServerTotals>::value, "sent as bytes");

double ServiceMicrosPerMb(const ServerReport& r) {
  return r.bytes_in > 0 ? r.service_s * 1e6 / (static_cast<double>(r.bytes_in) / 1e6) : 0;
}

Buffer EncodeReport(const IterationReport& report) { return Buffer::Copy(&report, sizeof(report)); }

Buffer EncodeReport(const ServerReport& report) {
  const size_t ranges = report.range_bytes.size() * sizeof(int64_t);
  uint8_t* out = nullptr;
  Buffer payload = Buffer::Allocate(sizeof(ServerTotals) + ranges, &out);
  std::memcpy(out, static_cast<const ServerTotals*>(&report), sizeof(ServerTotals));
  if (ranges > 0) std::memcpy(out + sizeof(ServerTotals), report.range_bytes.data(), ranges);
  return payload;
}

bool DecodeReport(const Buffer& payload, IterationReport* report, std::string* error) {
  if (payload.size() != sizeof(IterationReport)) {
    *error = "a worker's report of " + std::to_string(payload.size()) + " bytes, expected " +
             std::to_string(sizeof(IterationReport));
    return false;
  }
  std::memcpy(report, payload.data(), sizeof(IterationReport));
  return true;
}

bool DecodeReport(const Buffer& payload, ServerReport* report, std::string* error) {
  if (payload.size() < sizeof(ServerTotals) ||
      (payload.size() - sizeof(ServerTotals)) % sizeof(int64_t) != 0) {
    *error = "a server's report of " + std::to_string(payload.size()) + " bytes, expected " +
             std::to_string(sizeof(ServerTotals)) + " and 8 per key range";
    return false;
  }
  std::memcpy(static_cast<ServerTotals*>(report), payload.data(), sizeof(ServerTotals));
  report->range_bytes.resize((payload.size() - sizeof(ServerTotals)) / sizeof(int64_t));
  if (!report->range_bytes.empty()) {
    std::memcpy(report->range_bytes.data(), payload.data() + sizeof(ServerTotals),
                report->range_bytes.size() * sizeof(int64_t));
  }
  return true;
}

namespace {

template <typename Report>
Message MessageOf(proto::Command command, const Report& report, int sender) {
  Message msg;
  msg.meta.set_command(command);
  msg.meta.set_sender(sender);
  msg.meta.set_value_size(sizeof(double));  // reports are 8-byte fields
  msg.vals.push_back(EncodeReport(report));
  return msg;
}

}  // namespace

Message ReportMessage(const IterationReport& report, int sender) {
  return MessageOf(proto::ITERATION_REPORT, report, sender);
}

Message ReportMessage(const ServerReport& report, int sender) {
  return MessageOf(proto::SERVER_REPORT, report, sender);
}

}  // namespace pacer
