#pragma once

#include <chrono>
#include <string>

#include "pacer/config.h"
#include "ps/bootstrap/bootstrap.h"

namespace pacer {

// The first collective of a job: every rank tells every other what its own check of the
// configuration found (`problem`, empty when none) and the options that must be the same on
// every rank. Throws Error on every rank when any rank found a problem (naming that rank and
// the problem) or when an option differs between ranks (naming the option, the ranks and their
// values), so a typo on one rank, or in one rank's PACER_ environment, ends the whole job at once
// instead of leaving the others to time out.
void AgreeOnConfiguration(Bootstrap& bootstrap, const Config& config, const std::string& problem,
                          std::chrono::milliseconds timeout);

}  // namespace pacer
