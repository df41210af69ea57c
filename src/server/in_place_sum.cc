#include "server/in_place_sum.h"

#include <algorithm>
#include <chrono>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace detail {
namespace {

// The wall clock, not the thread's CPU time that requests are measured in where ranks share
// cores: that is a system call, read twice per piece of a few microseconds, a large share of it.
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

InPlaceSum::InPlaceSum(Reducer& reducer, std::vector<float*> targets,
                       std::vector<uint64_t> key_offsets, std::function<void()> release)
    : reducer_(reducer),
      targets_(std::move(targets)),
      key_offsets_(std::move(key_offsets)),
      release_(std::move(release)) {}

InPlaceSum::~InPlaceSum() { release_(); }

void InPlaceSum::Consume(uint64_t offset, const uint8_t* bytes, size_t length) {
  if (offset % sizeof(float) != 0 || length % sizeof(float) != 0 ||
      offset + length > key_offsets_.back()) {
    throw Error(StrCat("a piece of ", length, " bytes at ", offset, " of a push of ",
                       key_offsets_.back(), " bytes of floats is not whole values of it"));
  }
  const double start = Now();
  const uint64_t end = offset + length;
  while (offset < end) {
    while (offset >= key_offsets_[key_ + 1]) ++key_;
    const size_t count = (std::min(end, key_offsets_[key_ + 1]) - offset) / sizeof(float);
    float* dst = targets_[key_] + (offset - key_offsets_[key_]) / sizeof(float);
    AddFloats(reducer_, dst, dst, reinterpret_cast<const float*>(bytes), count);
    bytes += count * sizeof(float);
    offset += count * sizeof(float);
  }
  seconds_ += Now() - start;
}

}  // namespace detail
}  // namespace pacer
