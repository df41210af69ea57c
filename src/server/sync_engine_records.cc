// SyncEngine's keys as records (sync_engine.h): the whole state of a key, encoded for a migration
// to another server (Export, Import) and for a checkpoint (Checkpoint, Resume), and checked on the
// way in.
#include <algorithm>
#include <cstring>

#include "common/byte_stream.h"
#include "common/str_cat.h"
#include "pacer/error.h"
#include "server/sync_engine.h"

namespace pacer {

void SyncEngine::EncodeKey(const KeyState& k, ByteWriter& out) {
  out.Put(k.version);
  out.Put(k.complete);
  out.Put(k.applied);
  out.Put(k.dropped);
  out.Put(k.pushes);
  out.Put(static_cast<uint64_t>(k.switches_done));
  const std::string mode = k.mode.ToString();
  out.PutArray(mode.data(), mode.size());
  out.PutArray(k.last_clock);
  out.PutArray(k.arrived);
  k.params->Encode(out);
  out.Put(static_cast<uint64_t>(k.aggregates.size()));
  for (const auto& [clock, a] : k.aggregates) {
    out.Put(clock);
    out.Put(a.count);
    out.Put(a.summed);
    out.Put(a.weight);
    if (a.summed > 0)
      out.PutArray(a.summed == 1 ? a.first.as<float>() : a.sum_data, k.params->size());
  }
  out.Put(static_cast<uint64_t>(k.held.size()));
  for (const Gradient& g : k.held) {
    out.Put(g.worker);
    out.Put(g.clock);
    out.Put(g.version);
    out.Put(g.weight);
    out.PutArray(g.relayed);
    out.PutArray(g.values.as<float>(), g.values.size() / sizeof(float));
  }
}

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
      records.push_back(
          {it->first, EncodeRecord(allocate_, [&](ByteWriter& out) { EncodeKey(k, out); })});
    }
    it = keys_.erase(it);
  }
  return records;
}

void SyncEngine::Import(Key key, const Buffer& state) {
  if (keys_.count(key) && keys_.at(key).params) {
    throw Error(StrCat("key ", key, " moved here, but this server holds it already"));
  }
  ByteReader in(state.data(), state.size(), StrCat("the moved state of key ", key));
  KeyState k;
  k.version = in.Get<int64_t>();
  k.complete = in.Get<int64_t>();
  k.applied = in.Get<int64_t>();
  k.dropped = in.Get<int64_t>();
  k.pushes = in.Get<int64_t>();
  k.switches_done = in.Get<uint64_t>();
  const std::vector<char> mode = in.GetArray<char>();
  k.mode = SyncMode::Parse(std::string(mode.begin(), mode.end()));
  k.last_clock = in.GetArray<int64_t>();
  k.arrived = in.GetArray<int64_t>();
  if (k.last_clock.size() != static_cast<size_t>(num_workers_) ||
      k.arrived.size() != static_cast<size_t>(num_workers_) || k.switches_done > switches_.size()) {
    throw Error(StrCat(in.what(), ": clocks of ", k.arrived.size(), " workers and ",
                       k.switches_done, " mode switches; this job has ", num_workers_,
                       " workers and ", switches_.size(), " switches"));
  }
  k.params = ParameterState::Decode(in, allocate_);
  const size_t count = k.params->size();
  // The next array of the record, copied into recycled memory; a withheld gradient's may be empty.
  auto floats = [&](float** data, bool may_be_empty) {
    size_t n = 0;
    const uint8_t* values = in.GetArrayBytes<float>(&n);
    if (n == 0 && may_be_empty) return Buffer();
    if (n != count) throw Error(StrCat(in.what(), ": ", n, " values for a key of ", count));
    uint8_t* out = nullptr;
    Buffer buffer = allocate_(count * sizeof(float), &out);
    if (count > 0) std::memcpy(out, values, count * sizeof(float));
    if (data) *data = reinterpret_cast<float*>(out);
    return buffer;
  };
  for (uint64_t i = 0, n = in.Get<uint64_t>(); i < n; ++i) {
    const int64_t clock = in.Get<int64_t>();
    Aggregate& a = k.aggregates[clock];
    a.count = in.Get<int>();
    a.summed = in.Get<int>();
    a.weight = in.Get<double>();
    if (a.summed == 1) {
      a.first = floats(nullptr, false);
    } else if (a.summed > 1) {
      a.sum = floats(&a.sum_data, false);
    }
  }
  for (uint64_t i = 0, n = in.Get<uint64_t>(); i < n; ++i) {
    Gradient g;
    g.worker = in.Get<int>();
    g.clock = in.Get<int64_t>();
    g.version = in.Get<int64_t>();
    g.weight = in.Get<double>();
    g.relayed = in.GetArray<int>();
    for (int w : g.relayed) {
      if (w < 0 || w >= num_workers_) {
        throw Error(
            StrCat(in.what(), ": a held gradient relayed for worker ", w, " of ", num_workers_));
      }
    }
    g.values = floats(nullptr, g.weight == 0);
    k.held.push_back(std::move(g));
  }
  if (!in.done()) throw Error(StrCat(in.what(), ": bytes left over after the last field"));
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
  return EncodeRecord(allocate_, [&](ByteWriter& out) {
    out.Put(k.version);
    out.Put(k.complete);
    k.params->Encode(out);
  });
}

void SyncEngine::Resume(Key key, const Buffer& record) {
  KeyState& k = keys_[key];
  if (k.params) throw Error(StrCat("key ", key, " resumed from a checkpoint, but it has values"));
  ByteReader in(record.data(), record.size(), StrCat("the checkpoint of key ", key));
  const int64_t version = in.Get<int64_t>();
  const int64_t complete = in.Get<int64_t>();
  std::unique_ptr<ParameterState> params = ParameterState::Decode(in, allocate_);
  if (!in.done() || version < 0 || complete < 0) {
    throw Error(StrCat(in.what(), ": version ", version, ", completed clock ", complete,
                       in.done() ? "" : ", and bytes left over after the last field"));
  }
  k.params = std::move(params);
  k.version = version;
  k.complete = complete;
  k.last_clock.assign(num_workers_, complete - 1);
  k.arrived.assign(num_workers_, complete - 1);
  k.mode = mode_;
  k.switches_done = switches_.size();
  max_clock_seen_ = std::max(max_clock_seen_, complete - 1);
  Wake(k);
}

}  // namespace pacer
