#pragma once

#include <cstdint>

namespace pacer {

/// How messages move between ranks: the transports' knobs, a field per row of
/// pacer/tuning_options.def, each also a flag `--name` with an environment twin `PACER_NAME`.
/// The defaults suit the usual jobs; docs/PERFORMANCE.md says what each one buys.
struct TransportTuning {
#define PACER_OPTION(type, name, value, agreement, check, help) type name = value;
#include "pacer/tuning_options.def"
#undef PACER_OPTION
};

}  // namespace pacer
