#pragma once

#include <cstddef>
#include <string>

namespace pacer {

// Over TCP a streamed payload goes as pieces, one `sendmsg` each, and the kernel ends every
// `sendmsg` with a segment of its own: a piece of 256 KiB with its headers filled 4 segments of
// loopback and began a fifth, which carried a few dozen bytes. Each segment costs the whole
// loopback path (transmit, the receiver's TCP work, a wake-up, an ACK) whatever it carries. On a
// 2-core Intel Xeon VM, 1 MiB pushes at window 8, segments counted both ways: 256 KiB pieces
// made 29.4 segments per MiB, pieces that fill 4 whole segments 23.7, and over 5 interleaved
// turns 2.46 against 3.95 GB/s (medians); 64 KiB pieces made 45 segments per MiB against 25 for
// pieces that fill one, and 1.49 against 3.76 GB/s (4 turns). So pieces fill whole segments.

// Loopback's TCP segment: IP's 65535-byte packet less the IPv4 and TCP headers and the timestamp
// option. Every TCP connection between two ranks of one host goes through loopback. Elsewhere
// segments are the network's (1448 bytes at an MTU of 1500): there a piece spans about 180 of
// them, and the partial one it may end with is one segment in 180 (not measured).
constexpr size_t kLoopbackSegmentBytes = 65483;

// What UCX adds to a piece's own headers on the wire: its active-message headers took 12-19
// bytes in UCX 1.13 (found by the piece size at which a segment more was sent); with room to
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
// it): one segment under BBR, which paces a socket's segments out, and 256 KiB (4 segments) under
// any other. On a 2-core AMD EPYC VM, loopback, pushes at window 8, medians of 10-20 interleaved
// 1 GiB turns per sitting: under BBR, 1 MiB pushes in one-segment pieces read 3.85-4.45 GB/s
// against 3.26-4.05 in 4-segment ones over six sittings (faster in 14 of 20 and 11 of 16 turns
// where counted), 4 MiB pushes were faster in 8 of 10 turns, 16 MiB ones 3-14% slower. Under
// cubic, which does not pace, one-segment pieces were 13-23% slower (in every turn of three
// sittings, and in 8 of 10 of a fourth).
size_t StreamPieceTarget(const std::string& congestion_control);

// The kernel's TCP congestion control for new connections, or "" where it cannot be read.
std::string KernelTcpCongestionControl();

}  // namespace pacer
