#include "ps/transport/segment_pieces.h"

#include <algorithm>

namespace pacer {

size_t NextPieceLength(size_t remaining, size_t header_bytes, size_t target) {
  size_t length = target & ~size_t{7};
  const size_t overhead = header_bytes + kUcxWireHeaderBytes;
  if (target >= kLoopbackSegmentBytes) {
    const size_t segments = std::max<size_t>(1, (target + overhead) / kLoopbackSegmentBytes);
    const size_t wire = segments * kLoopbackSegmentBytes;
    if (wire > overhead + 8) length = (wire - overhead) & ~size_t{7};
  }
  length = std::max<size_t>(8, length);
  const size_t tail_allowance = target >= kLoopbackSegmentBytes ? kLoopbackSegmentBytes : 0;
  return remaining <= length + tail_allowance ? remaining : length;
}

}  // namespace pacer
