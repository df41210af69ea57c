#pragma once

#include <string>
#include <vector>

#include "pacer/transport_tuning.h"
#include "ps/bootstrap/bootstrap.h"
#include "ps/transport/transport.h"

namespace pacer {
namespace testing {

// The checks every Transport passes, written once, in the manner of the Reducer's conformance
// suite: the in-process tests run them over LocalTransport and UcxTransport (shared memory, TCP)
// with every rank a thread, the MPI tests over MpiTransport and UcxTransport with every rank a
// process. Each check runs on every rank of a job of two ranks or more: it is given the rank's
// transport, not yet started, and its bootstrap; it starts the transport, exchanges messages
// with every rank (itself too), checks with GoogleTest assertions what arrived and stops it.
//
// What a transport promises (see Transport): every message sent arrives once, intact, and its
// send completes once; small messages (a few KiB, which UCX sends eagerly) from one rank to
// another arrive in the order they were sent; a payload lands where the receiver's placer says when
// it says so; input that is no message is dropped, never delivered, and what follows it still
// arrives.
struct ConformanceCheck {
  const char* name;
  void (*run)(Transport& transport, Bootstrap& bootstrap);
};
const std::vector<ConformanceCheck>& ConformanceChecks();

// The settings the transports under the checks are made with: an in-flight cap small enough for
// the checks to fill it (a payload larger than it goes alone).
TransportTuning ConformanceTuning();

}  // namespace testing
}  // namespace pacer
