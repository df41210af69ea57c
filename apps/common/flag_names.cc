#include "flag_names.h"

namespace pacer {
namespace bench {

void UnderscoreFlagNames(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* arg = argv[i];
    if (arg[0] != '-' || arg[1] != '-') continue;
    for (char* c = arg + 2; *c && *c != '='; ++c) {
      if (*c == '-') *c = '_';
    }
  }
}

}  // namespace bench
}  // namespace pacer
