#include "pacer/version.h"

namespace pacer {

#define PACER_STRING_OF(x) #x
#define PACER_VERSION_STRING(major, minor, patch) \
  PACER_STRING_OF(major) "." PACER_STRING_OF(minor) "." PACER_STRING_OF(patch)

const char* Version() {
  return PACER_VERSION_STRING(PACER_VERSION_MAJOR, PACER_VERSION_MINOR, PACER_VERSION_PATCH);
}

}  // namespace pacer
