#include "worker/pull_assembly.h"

#include <algorithm>
#include <cstring>

#include "common/str_cat.h"

namespace pacer {

PullAssembly::PullAssembly(Buffer keys, int targets, detail::PullDestination destination,
                           size_t value_size_)
    : keys_(std::move(keys)),
      targets_(targets),
      destination_(std::move(destination)),
      value_size_(value_size_) {}

uint8_t* PullAssembly::Place(const DecodedHeader& header, const KnownLengths& known) {
  const WireHeader& w = header.wire;
  if (!(w.flags & WireHeader::kIndexInHeader) || !header.meta.error().empty() ||
      header.meta.value_size() != static_cast<int>(value_size_) || w.keys_bytes == 0) {
    return nullptr;
  }
  const Key* rkeys = header.index.as<Key>();
  const size_t m = w.keys_bytes / sizeof(Key);
  const int32_t* rlens =
      w.lens_bytes ? header.index.Slice(w.keys_bytes, w.lens_bytes).as<int32_t>() : nullptr;
  const size_t uniform = w.vals_bytes / value_size_ / m;
  auto length = [&](size_t j) { return rlens ? static_cast<size_t>(rlens[j]) : uniform; };

  const Key* keys = keys_.as<Key>();
  const size_t n = keys_.count<Key>();
  if (placement_impossible_) return nullptr;
  if (placed_ == nullptr) {
    std::vector<size_t> offsets(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      size_t len = 0;
      if (targets_ == 1) {
        if (m != n || rkeys[i] != keys[i]) return nullptr;
        len = length(i);
      } else if (auto seen = known.find(keys[i]); seen != known.end()) {
        len = static_cast<size_t>(seen->second);
      } else {
        placement_impossible_ = true;
        return nullptr;
      }
      offsets[i + 1] = offsets[i] + len * value_size_;
    }
    placed_ = destination_.values(offsets[n]);
    if (placed_ == nullptr) {
      placement_impossible_ = true;
      return nullptr;
    }
    placed_offsets_ = std::move(offsets);
  }
  // This response's keys must be a run of the request's, with the lengths the layout assumed.
  const size_t first = static_cast<size_t>(std::lower_bound(keys, keys + n, rkeys[0]) - keys);
  if (first + m > n || std::memcmp(keys + first, rkeys, m * sizeof(Key)) != 0) return nullptr;
  for (size_t j = 0; j < m; ++j) {
    if (placed_offsets_[first + j + 1] - placed_offsets_[first + j] != length(j) * value_size_) {
      return nullptr;
    }
  }
  return placed_ + placed_offsets_[first];
}

std::string PullAssembly::Assemble(const std::string& prefix, const char* what,
                                   std::vector<int32_t>* lens_out) {
  const Key* keys = keys_.as<Key>();
  const size_t n = keys_.count<Key>();
  struct Source {
    size_t response = SIZE_MAX;
    size_t offset = 0;  // in the response's values
  };
  std::vector<Source> source(n);
  std::vector<int32_t> lens(n, 0);
  std::vector<Buffer> values;  // per response
  for (const Message& r : responses_) {
    const Key* rkeys = r.keys.as<Key>();
    const size_t rn = r.num_keys();
    values.push_back(r.vals_buffer());
    const int32_t* rlens = r.lens.as<int32_t>();
    size_t uniform = rn == 0 ? 0 : values.back().size() / value_size_ / rn;
    if (rlens == nullptr && uniform * rn * value_size_ != values.back().size()) {
      return StrCat(prefix, "server rank ", r.meta.sender(), " answered ", values.back().size(),
                    " bytes of values for ", rn, " keys without lengths");
    }
    size_t offset = 0;
    for (size_t j = 0; j < rn; ++j) {
      const Key* at = std::lower_bound(keys, keys + n, rkeys[j]);
      size_t pos = static_cast<size_t>(at - keys);
      if (at == keys + n || *at != rkeys[j] || source[pos].response != SIZE_MAX) {
        return StrCat(prefix, "server rank ", r.meta.sender(), " answered key ", rkeys[j],
                      at != keys + n && *at == rkeys[j] ? " twice" : ", which was not requested");
      }
      lens[pos] = rlens ? rlens[j] : static_cast<int32_t>(uniform);
      source[pos] = {values.size() - 1, offset};
      offset += static_cast<size_t>(lens[pos]) * value_size_;
    }
  }
  std::vector<size_t> offsets(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    if (source[i].response == SIZE_MAX) {
      return StrCat(prefix, "no server answered key ", keys[i], " of a ", what, " of ", n, " keys");
    }
    offsets[i + 1] = offsets[i] + static_cast<size_t>(lens[i]) * value_size_;
  }
  uint8_t* out = nullptr;
  if (placed_ != nullptr && placed_offsets_ == offsets) {
    out = placed_;  // the layout guessed in Place holds: placed values are where they belong
  } else {
    if (placed_ != nullptr) {
      // Some values were received in place at offsets that turned out wrong: move them aside
      // before the destination is laid out anew.
      for (Buffer& v : values) {
        if (v.data() >= placed_ && v.data() < placed_ + placed_offsets_.back()) {
          v = Buffer::Copy(v.data(), v.size());
        }
      }
    }
    out = destination_.values(offsets[n]);
    if (out == nullptr && offsets[n] > 0) {
      return StrCat(prefix, "the destination buffer does not hold the ", offsets[n],
                    " bytes pulled for ", n, " keys");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* from = values[source[i].response].data() + source[i].offset;
    const size_t bytes = offsets[i + 1] - offsets[i];
    if (bytes > 0 && from != out + offsets[i]) std::memcpy(out + offsets[i], from, bytes);
  }
  if (destination_.lengths) {
    int32_t* out_lens = destination_.lengths(n);
    if (out_lens == nullptr)
      return StrCat(prefix, "the lengths buffer does not hold ", n, " entries");
    std::copy(lens.begin(), lens.end(), out_lens);
  }
  *lens_out = std::move(lens);
  return "";
}

}  // namespace pacer
