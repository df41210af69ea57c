#pragma once

// The CUDA back end of pacer::Reducer. Plain C++: callers need no CUDA headers.

#include <memory>
#include <string>

#include "pacer/reducer.h"

namespace pacer {

// A reducer on the calling thread's current CUDA device, or nullptr with *why_not saying why none
// is usable (no driver, no device, a failed initialization).
//
// Sum and Cast take device memory directly (asynchronous on the reducer's stream: call
// Synchronize before reading the result on the host) and also accept host memory for any operand,
// which they stage through page-locked buffers and finish before returning. The optimizer steps
// take device memory only.
std::unique_ptr<Reducer> MakeCudaReducer(std::string* why_not);

}  // namespace pacer
