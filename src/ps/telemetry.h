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

Buffer EncodeReport(const IterationReport& report);
// False (with the reason) when `payload` is not a report.
bool DecodeReport(const Buffer& payload, IterationReport* report, std::string* error);

}  // namespace pacer
