#pragma once

#include <sstream>
#include <string>

namespace pacer {

// Concatenates anything streamable into one string. For error messages: building an ostringstream
// costs hundreds of nanoseconds, so hot paths call this only once they know something is wrong.
template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  return s.str();
}

}  // namespace pacer
