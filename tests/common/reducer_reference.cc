#include "reducer_reference.h"

#include <cstring>

namespace pacer::testing {

double HostArray::Get(size_t i) const {
  switch (type) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    case DType::kF16:
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      return type == DType::kF16 ? F16ToFloat(h) : Bf16ToFloat(h);
    }
  }
  return 0;
}

void HostArray::Set(size_t i, double value) {
  const float f = static_cast<float>(value);
  if (type == DType::kF32) {
    std::memcpy(bytes.data() + 4 * i, &f, 4);
    return;
  }
  const uint16_t h = type == DType::kF16 ? FloatToF16(f) : FloatToBf16(f);
  std::memcpy(bytes.data() + 2 * i, &h, 2);
}

HostArray RandomArray(std::mt19937_64& rng, DType type, size_t count) {
  HostArray a(type, count);
  std::uniform_real_distribution<double> magnitude(0.5, 2.0);
  for (size_t i = 0; i < count; ++i) a.Set(i, (rng() & 1 ? 1 : -1) * magnitude(rng));
  return a;
}

uint64_t FreshSeed() { return std::random_device{}() * 0x9E3779B97F4A7C15ull + 1; }

DeviceArray::DeviceArray(Reducer& reducer, DType type, size_t count, size_t offset_elements)
    : reducer_(reducer),
      type_(type),
      count_(count),
      base_(reducer.Allocate((count + offset_elements) * SizeOf(type))),
      data_(static_cast<uint8_t*>(base_) + offset_elements * SizeOf(type)) {}

DeviceArray::~DeviceArray() { reducer_.Free(base_); }

void DeviceArray::Upload(const HostArray& host) {
  reducer_.CopyIn(data_, host.bytes.data(), host.bytes.size());
}

HostArray DeviceArray::Download() const {
  HostArray host(type_, count_);
  reducer_.Synchronize();
  reducer_.CopyOut(host.bytes.data(), data_, host.bytes.size());
  return host;
}

void DeviceArray::Poison() {
  const std::vector<uint8_t> ones(count_ * SizeOf(type_), 0xFF);
  reducer_.CopyIn(data_, ones.data(), ones.size());
}

}  // namespace pacer::testing
