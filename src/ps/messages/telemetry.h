#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pacer/buffer.h"
#include "pacer/iteration_stats.h"
#include "ps/messages/message.h"

namespace pacer {

// What a worker reports to the scheduler after each iteration: its IterationStats, and where its
// gradients went, in one small message sent asynchronously, so reporting never waits on the data
// path.
struct IterationReport : IterationStats {
  int64_t partner = -1;  // the rank its gradients went through (STRET's relay); -1: none
  // The application's test accuracy (0 to 1) as last told (GradientSync::ReportAccuracy) since
  // the report before; -1: not told.
  double accuracy = -1;
};

// What a server reports to the scheduler every --server_report_ms: its service over the interval.
struct ServerTotals {
  double t_s = 0;        // end of the interval, since the server's session began
  double service_s = 0;  // time spent handling requests
  int64_t requests = 0;
  int64_t bytes_in = 0;   // work received: keys and values, at least 64 KiB per request
  int64_t bytes_out = 0;  // values sent back
  int64_t queue = 0;      // requests waiting in the shards' queues at the end
  int64_t keys = 0;       // distinct keys handled so far
};
struct ServerReport : ServerTotals {
  // Bytes pushed to each key range over the interval, by range (the load that SAS balances);
  // empty unless the scheduler balances load (--balance=sas).
  std::vector<int64_t> range_bytes;
};

// A server's service time per MB of work received over the report's interval (each request counts
// at least 64 KiB of work, see ServiceReporter); 0 for an interval without work.
double ServiceMicrosPerMb(const ServerReport& report);

// Reports travel as their bytes: 8-byte fields, then a server's range bytes.
Buffer EncodeReport(const IterationReport& report);
Buffer EncodeReport(const ServerReport& report);
// False (with the reason) when `payload` is not a report.
bool DecodeReport(const Buffer& payload, IterationReport* report, std::string* error);
bool DecodeReport(const Buffer& payload, ServerReport* report, std::string* error);
// The message that carries a report from rank `sender` to the scheduler.
Message ReportMessage(const IterationReport& report, int sender);
Message ReportMessage(const ServerReport& report, int sender);

}  // namespace pacer
