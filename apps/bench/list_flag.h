#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pacer::bench {

// "a,b,c" -> {"a", "b", "c"}; empty items are dropped.
std::vector<std::string> SplitList(const std::string& list);

// "4096", "64KB", "16MB", "1GB" (powers of 1024) -> bytes; "1MB..256MB" -> every power of 4
// times the first size up to the last. Throws std::invalid_argument on anything else.
std::vector<size_t> ParseSizes(const std::string& list);

}  // namespace pacer::bench
