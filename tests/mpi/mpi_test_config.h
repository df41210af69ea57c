#pragma once

#include "pacer/config.h"

namespace pacer {

// The job's configuration from the command line (--servers, --transport, ...).
const Config& MpiTestConfig();

}  // namespace pacer
