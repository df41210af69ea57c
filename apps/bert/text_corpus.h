#pragma once

#include <string>
#include <vector>

namespace pacer {
namespace apps {

// Where Debian's fortunes package puts its plain-text files.
constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

// The entries of the fortune files in `dir` (each file a list of texts separated by lines that
// hold only "%"): every regular file whose name has no dot (the .dat indexes and .u8 links are
// skipped), in name order, with runs of whitespace collapsed to one space and empty entries
// dropped. Throws std::runtime_error naming the folder when it has no such file.
std::vector<std::string> LoadFortunes(const std::string& dir = kFortunesDir);

}  // namespace apps
}  // namespace pacer
