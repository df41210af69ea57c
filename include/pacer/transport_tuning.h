#pragma once

#include <cstdint>

namespace pacer {

// How messages move between ranks: the transports' knobs, apart from what a job is (Config). Each
// field is a flag of Config's kind (--name, with a PACER_NAME environment twin). The defaults suit
// the usual jobs; docs/PERFORMANCE.md says what each one buys.
struct TransportTuning {
  // --max_inflight_bytes: cap on bytes posted but not yet completed per destination; larger
  // sends wait in a queue (UCX over TCP collapses without a cap).
  int64_t max_inflight_bytes = int64_t{16} << 20;
  // --max_message_bytes: a request's values for one server go in messages of at most this many
  // bytes, whole keys each (a larger key goes alone), so that the server sums one message while
  // the next arrives, and each fits the shared-memory ring. Pulls are cut so only once the keys'
  // lengths are known from an earlier pull. 0: one message per server.
  int64_t max_message_bytes = int64_t{4} << 20;
  // --rndv_threshold: messages at least this large use UCX rendezvous (zero-copy, one transfer).
  int64_t rndv_threshold = 16384;
  // --shm_ring_bytes: a worker's shared memory for payloads to ranks on its host, from
  // rndv_threshold to a quarter of this: it writes them there and sends only where they lie. Only
  // the pages of the bytes in flight are ever touched. 0 turns it off, as does a UCX_TLS without
  // shared memory. 128 MiB takes 16 MiB pushes, 7 of them in flight.
  int64_t shm_ring_bytes = int64_t{128} << 20;
  // --read_threads: threads (the progress thread and helpers) that copy a large payload out of a
  // server's memory on the same host, as a pull's answer; a copy by one thread is bound by one
  // core's outstanding cache misses. 0: UCX rendezvous instead, as does a UCX_TLS without shared
  // memory.
  int read_threads = 2;
  // --stream_piece_bytes: where a worker's large payloads go over TCP only (a UCX_TLS without
  // shared memory), they go as pieces of about this many bytes, which the server sums into its
  // store straight from UCX's receive buffer, in cache, instead of receiving the whole payload
  // first. From one loopback TCP segment (65483 bytes) up, a piece with its headers fills whole
  // segments, and the last piece of a key's values may take up to a segment more. -1: by the
  // kernel's TCP congestion control, one segment under BBR (which paces), 256 KiB under any other.
  // 0: UCX rendezvous instead.
  int64_t stream_piece_bytes = -1;
  // --spin_us: how long a progress thread (and a Wait) polls before it blocks; -1 chooses 500 on
  // servers and 50 elsewhere where this host's servers and workers fit its cores, else 0 (spinning
  // on a full host starves the thread that is waited for).
  int spin_us = -1;
};

}  // namespace pacer
