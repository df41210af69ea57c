#pragma once

// Host-side references and data for the reducer tests: random inputs, conversions in float64,
// and element-wise checks that say which element and by how much.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pacer/dtype.h"
#include "pacer/reducer.h"

namespace pacer::testing {

// Elements of one type held as raw bytes, with float64 views for references.
struct HostArray {
  DType type = DType::kF32;
  std::vector<uint8_t> bytes;

  HostArray(DType t, size_t count) : type(t), bytes(count * SizeOf(t)) {}
  size_t count() const { return bytes.size() / SizeOf(type); }
  double Get(size_t i) const;
  void Set(size_t i, double value);  // rounds as the kernels do
};

// Values uniform in [-2, -0.5] U [0.5, 2]: never zero, signs mixed, and exactly representable
// after a round trip through `type`.
HostArray RandomArray(std::mt19937_64& rng, DType type, size_t count);

// A seed that differs per run, printed by the test so a failure can be replayed.
uint64_t FreshSeed();

// Device memory filled from or read back into a HostArray, freed by the reducer on destruction.
class DeviceArray {
 public:
  DeviceArray(Reducer& reducer, DType type, size_t count, size_t offset_elements);
  ~DeviceArray();
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  void Upload(const HostArray& host);
  HostArray Download() const;
  void Poison();  // all bits set: NaN in every type, so an unwritten element cannot pass
  void* data() const { return data_; }
  ConstArray as_input() const { return {data_, type_}; }
  MutableArray as_output() const { return {data_, type_}; }

 private:
  Reducer& reducer_;
  DType type_;
  size_t count_;
  void* base_;
  void* data_;  // base_ plus an offset that makes the pointer unaligned when asked
};

}  // namespace pacer::testing
