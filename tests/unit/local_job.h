#pragma once

#include <functional>

#include "pacer/config.h"
#include "pacer/session.h"

namespace pacer {

// Runs a whole job in this process, every rank a thread with its own Session over LocalTransport
// (gloo's way of testing protocols without processes). `body` runs on every rank, then the rank
// finalizes; an exception escaping `body` fails the test, naming the rank.
void RunLocalJob(int servers, int workers, const Config& config,
                 const std::function<void(Session&)>& body);

}  // namespace pacer
