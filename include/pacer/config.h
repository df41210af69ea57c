#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pacer/transport_tuning.h"

namespace pacer {

/// Everything a job can set: a field per row of pacer/config_options.def (which says what each
/// one means, its default and its check), and the transports' knobs. Each is also a flag `--name`
/// with an environment twin `PACER_NAME`. Code that embeds Pacer can fill a Config directly. The
/// values are checked when a Session starts with them: it throws Error naming the flag.
struct Config {
#define PACER_OPTION(type, name, value, agreement, check, help) type name = value;
#include "pacer/config_options.def"
#undef PACER_OPTION

  /// How messages move: the transport's knobs (flags of their own, as every field here).
  TransportTuning tuning;

  /// Reads the flags (after ParseCommandLine) and their `PACER_` environment twins.
  static Config FromFlags();
  /// Parses argv (gflags), removing the flags it knows, and returns FromFlags().
  static Config ParseCommandLine(int* argc, char*** argv);
};

}  // namespace pacer
