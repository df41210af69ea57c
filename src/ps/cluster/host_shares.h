#pragma once

#include <chrono>

#include "pacer/config.h"
#include "ps/bootstrap/bootstrap.h"
#include "ps/cluster/roles.h"

namespace pacer {

// Fills in the settings whose default depends on how many busy ranks (servers and workers; the
// scheduler mostly sleeps) share this host's cores, and returns whether they fit the cores.
// Collective: every rank counts, whatever it was given, so that ranks launched with different
// settings (MPMD) still meet.
//
// A progress thread may spin only where the busy ranks fit the cores: on a full host, a spinning
// thread delays the very thread it waits for. Servers, whose work is answering, poll longer than
// the others. A sum or optimizer step uses the rank's share of the cores, not all of them, so that
// a server's sum leaves its worker the core it copies on.
bool ResolveHostShares(Bootstrap& bootstrap, const Roles& roles, Config& config,
                       std::chrono::milliseconds timeout);

}  // namespace pacer
