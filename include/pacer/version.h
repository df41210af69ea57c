#pragma once

// Pacer's version, written here once: the build reads it (CMakeLists.txt), and so does
// pacer::Version().
#define PACER_VERSION_MAJOR 0
#define PACER_VERSION_MINOR 1
#define PACER_VERSION_PATCH 0

namespace pacer {

// "MAJOR.MINOR.PATCH" of the library linked, which may differ from the header's macros where an
// application was compiled against another version's headers.
const char* Version();

}  // namespace pacer
