#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "pacer/buffer.h"
#include "pacer/types.h"

namespace pacer {

// SMS's skip on the pull side (STRAGGLERS.md section 5): the parameters last sent to each skipping
// worker, so that a key whose parameters moved little since need not cross a slow link again.
// The worker keeps its own copy of what it received; a pull that says so (keep_parameters) is
// answered "unchanged" while ||w - w_sent|| <= eps x ||w_sent|| and the worker still holds the
// version sent, else with the values, which are then kept. A pull without it frees the entry, so
// the memory held is at most (workers skipping) x (bytes of this shard's keys). One per request
// shard, used by its shard only.
class SentParameters {
 public:
  // What to send worker `worker`, which holds `held_version` of `key`, now at `version` with
  // values `now`: true if the parameters last sent to it were that version and stand for `now`
  // within `eps`; false after keeping a copy of `now` as sent.
  bool Unchanged(int worker, Key key, int64_t held_version, const Buffer& now, int64_t version,
                 double eps);
  // Frees what is kept for `worker` and `key` (nothing kept: nothing to do).
  void Forget(int worker, Key key);
  // Frees what is kept of `key` for every worker: it moves to another server, whose first answer
  // to each worker carries the values.
  void ForgetKey(Key key);
  // The bytes kept for `key`, over the workers.
  int64_t BytesOf(Key key) const;

 private:
  struct Sent {
    int64_t version = 0;
    Buffer values;
  };
  std::map<std::pair<Key, int>, Sent> sent_;  // by key, then worker
};

}  // namespace pacer
