#pragma once

#include <cstdint>

#include "ps/messages/telemetry.h"

namespace pacer {

// What a worker's iteration starts with, as the parts beside the loop set it: the share its
// gradients count for (a tuned or shrunk batch's), and whether a gradient close to the last one
// sent goes as "same as last" (SMS's skip).
struct IterationPlan {
  double weight = 1;
  bool skip_unchanged = false;
};

// A piece that hangs off a worker's iteration loop (WorkerIterations) rather than living in it:
// STRET's relay, the scheduler's batch orders (STRET's tuning, SMS's shrink and skip) and
// Falcon's tasks. The loop calls every part at the start of each iteration, before any push, and
// at its end with the report it is about to send; the application's thread makes both calls.
class IterationPart {
 public:
  virtual ~IterationPart() = default;
  // Iteration `clock` begins: the part takes up what was ordered for it and may change `plan`.
  virtual void Begin(int64_t clock, IterationPlan& plan) = 0;
  // The iteration ended: the part adds what it knows of it to `report` (also the application's
  // IterationStats).
  virtual void End(IterationReport& report) = 0;
};

}  // namespace pacer
