#pragma once

/// \file
/// Pacer's version, written here once: the build reads it (CMakeLists.txt), and so does
/// pacer::Version().

/// The headers' major version (pacer::Version() gives the linked library's).
#define PACER_VERSION_MAJOR 0
/// The headers' minor version.
#define PACER_VERSION_MINOR 1
/// The headers' patch version.
#define PACER_VERSION_PATCH 0

namespace pacer {

/// "MAJOR.MINOR.PATCH" of the library linked, which may differ from the header's macros where an
/// application was compiled against another version's headers.
const char* Version();

}  // namespace pacer
