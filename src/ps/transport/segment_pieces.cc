#include "ps/transport/segment_pieces.h"

#include <algorithm>

namespace pacer {

size_t NextPieceLength(size_t remaining, size_t header_bytes, size_t target) {
  const size_t whole_values = std::max<size_t>(8, target & ~size_t{7});
  if (target < kLoopbackSegmentBytes) return std::min(remaining, whole_values);
  const size_t overhead = header_bytes + kUcxWireHeaderBytes;
  const size_t wire = (target + overhead) / kLoopbackSegmentBytes * kLoopbackSegmentBytes;
  const size_t length = wire > overhead + 8 ? (wire - overhead) & ~size_t{7} : whole_values;
  return remaining <= length + kLoopbackSegmentBytes ? remaining : length;
}

}  // namespace pacer
