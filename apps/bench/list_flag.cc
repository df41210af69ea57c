#include "list_flag.h"

#include <sstream>
#include <stdexcept>

namespace pacer::bench {
namespace {

size_t ParseSize(const std::string& text) {
  size_t digits = 0;
  const unsigned long long value = std::stoull(text, &digits);
  const std::string unit = text.substr(digits);
  const size_t shift = unit.empty() || unit == "B" ? 0
                       : unit == "KB"              ? 10
                       : unit == "MB"              ? 20
                       : unit == "GB"              ? 30
                                                   : 64;
  if (shift == 64) throw std::invalid_argument("size '" + text + "': unit must be B, KB, MB or GB");
  return static_cast<size_t>(value) << shift;
}

}  // namespace

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<size_t> ParseSizes(const std::string& list) {
  std::vector<size_t> sizes;
  for (const std::string& item : SplitList(list)) {
    const size_t range = item.find("..");
    if (range == std::string::npos) {
      sizes.push_back(ParseSize(item));
      continue;
    }
    const size_t first = ParseSize(item.substr(0, range)), last = ParseSize(item.substr(range + 2));
    if (first == 0 || first > last) throw std::invalid_argument("size range '" + item + "'");
    for (size_t s = first; s <= last; s *= 4) sizes.push_back(s);
  }
  return sizes;
}

}  // namespace pacer::bench
