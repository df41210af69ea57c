#pragma once

#include <cstddef>
#include <string>

namespace pacer {

// Over TCP a streamed payload goes as pieces, one `sendmsg` each, and the kernel ends every
// `sendmsg` with a segment of its own: a piece of 256 KiB with its headers filled 4 segments of
// loopback and began a fifth, which carried a few dozen bytes. Each segment costs the whole
// loopback path (transmit, the receiver's TCP work, a wake-up, an ACK) whatever it carries. So
// pieces fill whole segments.

// Loopback's TCP segment: IP's 65535-byte packet less the IPv4 and TCP headers and the timestamp
// option. Every TCP connection between two ranks of one host goes through loopback. Elsewhere
// segments are the network's (1448 bytes at an MTU of 1500): there a piece spans about 180 of
// them, and the partial one it may end with is one segment in 180 (not measured).
constexpr size_t kLoopbackSegmentBytes = 65483;

// What UCX adds to a piece's own headers on the wire (its active-message headers), with room to
// spare.
constexpr size_t kUcxWireHeaderBytes = 64;

// The length of the next piece of a fragment of which `remaining` bytes are still to send, given
// `header_bytes` of Pacer's headers in front of it and a wish for pieces of `target` bytes. A
// piece is a multiple of 8 bytes (whole values of any type); with its headers it fills whole
// segments, as many as `target` fills at least (one if `target` fills less, unless `target` is
// below a segment: then `target` itself). The fragment's last piece takes its tail: all that
// remains when it is at most a segment more than a piece.
size_t NextPieceLength(size_t remaining, size_t header_bytes, size_t target);

// The piece target under a congestion control that does not pace (4 loopback segments' worth).
constexpr size_t kUnpacedPieceTarget = size_t{256} << 10;

// The piece target where the caller leaves it to Pacer (--stream_piece_bytes=-1), by the kernel's
// TCP congestion control (`congestion_control`, as /proc/sys/net/ipv4/tcp_congestion_control names
// it): one segment under BBR, which paces a socket's segments out, so that a piece leaves as soon
// as it is cut, and 256 KiB (4 segments) under any other, where fewer, larger sends cost less.
size_t StreamPieceTarget(const std::string& congestion_control);

// The kernel's TCP congestion control for new connections, or "" where it cannot be read.
std::string KernelTcpCongestionControl();

}  // namespace pacer
