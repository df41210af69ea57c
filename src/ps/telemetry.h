#pragma once

#include <cstdint>
#include <string>

#include "pacer/buffer.h"

namespace pacer {

// What a worker reports to the scheduler after each iteration: one small message (88 bytes),
// sent asynchronously, so reporting never waits on the data path.
struct IterationReport {
  int64_t iteration = 0;  // the worker's own count of iterations
  int64_t clock = 0;
  int64_t bytes_out = 0;
  int64_t bytes_in = 0;
  int64_t batch = 0;
  int64_t version = 0;
  double start_s = 0;    // since the worker's session began
  double compute_s = 0;  // begin to the last push
  double push_s = 0;     // first push sent to the last one acknowledged
  double pull_s = 0;     // last push acknowledged to the last pull received
  double wait_s = 0;     // blocked in Wait and EndIteration
};

// What a server reports to the scheduler every --server_report_ms: its service over the interval.
struct ServerReport {
  double t_s = 0;        // end of the interval, since the server's session began
  double service_s = 0;  // time spent handling requests
  int64_t requests = 0;
  int64_t bytes_in = 0;   // work received: keys and values, at least 64 KiB per request
  int64_t bytes_out = 0;  // values sent back
  int64_t queue = 0;      // requests waiting in the shards' queues at the end
  int64_t keys = 0;       // distinct keys handled so far
};

// Reports travel as their bytes (both are 8-byte fields only).
template <typename Report>
Buffer EncodeReport(const Report& report) {
  return Buffer::Copy(&report, sizeof(report));
}
// False (with the reason) when `payload` is not a Report.
template <typename Report>
bool DecodeReport(const Buffer& payload, Report* report, std::string* error);

}  // namespace pacer
