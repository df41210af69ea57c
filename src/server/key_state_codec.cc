// KeyStateCodec (key_state_codec.h): the records' layout, field by field, and its checks.
#include "server/key_state_codec.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/byte_stream.h"
#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

Buffer KeyStateCodec::Encode(const KeyState& k) const {
  return EncodeRecord(allocate_, [&](ByteWriter& out) {
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
    out.PutArray(k.group_complete);
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
  });
}

KeyState KeyStateCodec::Decode(Key key, const Buffer& record, size_t switches) const {
  ByteReader in(record.data(), record.size(), StrCat("the moved state of key ", key));
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
  k.group_complete = in.GetArray<int64_t>();
  if (k.last_clock.size() != static_cast<size_t>(num_workers_) ||
      k.arrived.size() != static_cast<size_t>(num_workers_) || k.switches_done > switches) {
    throw Error(StrCat(in.what(), ": clocks of ", k.arrived.size(), " workers and ",
                       k.switches_done, " mode switches; this job has ", num_workers_,
                       " workers and ", switches, " switches"));
  }
  const size_t groups = k.mode.kind == SyncMode::Kind::kGroups ? k.mode.groups.size() : 0;
  if (k.group_complete.size() != groups) {
    throw Error(StrCat(in.what(), ": clocks of ", k.group_complete.size(), " groups under ",
                       k.mode.ToString()));
  }
  k.mode.CheckFits(num_workers_);
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
  return k;
}

Buffer KeyStateCodec::EncodeCheckpoint(const KeyState& k) const {
  return EncodeRecord(allocate_, [&](ByteWriter& out) {
    out.Put(k.version);
    out.Put(k.complete);
    k.params->Encode(out);
  });
}

void KeyStateCodec::DecodeCheckpoint(Key key, const Buffer& record, KeyState* k) const {
  ByteReader in(record.data(), record.size(), StrCat("the checkpoint of key ", key));
  const int64_t version = in.Get<int64_t>();
  const int64_t complete = in.Get<int64_t>();
  std::unique_ptr<ParameterState> params = ParameterState::Decode(in, allocate_);
  if (!in.done() || version < 0 || complete < 0) {
    throw Error(StrCat(in.what(), ": version ", version, ", completed clock ", complete,
                       in.done() ? "" : ", and bytes left over after the last field"));
  }
  k->params = std::move(params);
  k->version = version;
  k->complete = complete;
}

}  // namespace pacer
