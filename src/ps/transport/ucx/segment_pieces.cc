#include "ps/transport/ucx/segment_pieces.h"

#include <algorithm>
#include <fstream>

namespace pacer {

size_t NextPieceLength(size_t remaining, size_t header_bytes, size_t target) {
  const size_t whole_values = std::max<size_t>(8, target & ~size_t{7});
  if (target < kLoopbackSegmentBytes) return std::min(remaining, whole_values);
  const size_t overhead = header_bytes + kUcxWireHeaderBytes;
  const size_t wire = (target + overhead) / kLoopbackSegmentBytes * kLoopbackSegmentBytes;
  const size_t length = wire > overhead + 8 ? (wire - overhead) & ~size_t{7} : whole_values;
  return remaining <= length + kLoopbackSegmentBytes ? remaining : length;
}

size_t StreamPieceTarget(const std::string& congestion_control) {
  return congestion_control == "bbr" ? kLoopbackSegmentBytes : kUnpacedPieceTarget;
}

std::string KernelTcpCongestionControl() {
  std::ifstream file("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string name;
  file >> name;
  return name;
}

}  // namespace pacer
