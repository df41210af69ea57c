#pragma once

namespace pacer {
namespace bench {

// Lets the apps take flags as the issues spell them (--compute-ms) and as gflags wants them
// (--compute_ms): turns the dashes of every --long-flag name (not its value) into underscores.
void UnderscoreFlagNames(int argc, char** argv);

}  // namespace bench
}  // namespace pacer
