// SyncEngine's keys leaving and joining it (sync_engine.h): a migration to another server (Export,
// Import) and a checkpoint (Checkpoint, Resume), around the records KeyStateCodec makes.
#include <algorithm>
#include <cstring>

#include "common/byte_stream.h"
#include "common/str_cat.h"
#include "pacer/error.h"
#include "server/sync_engine.h"

namespace pacer {

std::vector<SyncEngine::KeyRecord> SyncEngine::Export(const std::function<bool(Key)>& moving) {
  // Pulls that wait on a moving key, wherever they wait (a pull waits on its first key not
  // ready, which may be one that stays).
  for (auto& entry : keys_) {
    for (const auto& pull : entry.second.waiters) {
      if (pull->cancelled ||
          std::none_of(pull->keys.begin(), pull->keys.end(), [&](Key k) { return moving(k); })) {
        continue;
      }
      pull->cancelled = true;
      if (pull->redirect) pull->redirect();
    }
  }
  std::vector<KeyRecord> records;
  for (auto it = keys_.begin(); it != keys_.end();) {
    if (!moving(it->first)) {
      ++it;
      continue;
    }
    const KeyState& k = it->second;
    if (k.params) {
      records.push_back({it->first, codec_.Encode(k)});
    }
    it = keys_.erase(it);
  }
  return records;
}

void SyncEngine::Import(Key key, const Buffer& state) {
  if (keys_.count(key) && keys_.at(key).params) {
    throw Error(StrCat("key ", key, " moved here, but this server holds it already"));
  }
  KeyState k = codec_.Decode(key, state, switches_.size());
  for (int64_t clock : k.arrived) max_clock_seen_ = std::max(max_clock_seen_, clock);
  KeyState& slot = keys_[key];
  k.waiters = std::move(slot.waiters);  // pulls that came first wait for these values
  slot = std::move(k);
  Wake(slot);
}

Buffer SyncEngine::Checkpoint(Key key) const {
  auto it = keys_.find(key);
  if (it == keys_.end() || !it->second.params) {
    throw Error(StrCat("checkpoint of key ", key, ", which has no values"));
  }
  const KeyState& k = it->second;
  // Partial sums and held gradients are of clocks some worker pushed past the completed one.
  for (int w = 0; w < num_workers_; ++w) {
    if (k.arrived[w] >= k.complete && !excluded_[w]) {
      throw Error(StrCat("checkpoint of key ", key,
                         " in the middle of an iteration: clocks before ", k.complete,
                         " are complete, and worker ", w, " pushed clock ", k.arrived[w],
                         " (every worker must be between iterations)"));
    }
  }
  return codec_.EncodeCheckpoint(k);
}

void SyncEngine::Resume(Key key, const Buffer& record) {
  KeyState& k = keys_[key];
  if (k.params) throw Error(StrCat("key ", key, " resumed from a checkpoint, but it has values"));
  codec_.DecodeCheckpoint(key, record, &k);
  k.last_clock.assign(num_workers_, k.complete - 1);
  k.arrived.assign(num_workers_, k.complete - 1);
  k.SetMode(mode_);
  k.switches_done = switches_.size();
  max_clock_seen_ = std::max(max_clock_seen_, k.complete - 1);
  Wake(k);
}

}  // namespace pacer
