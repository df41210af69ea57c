#include "reducer_conformance.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "pacer/error.h"
#include "reducer_reference.h"

namespace pacer::testing {

void ReducerConformance::SetUp() {
  std::string why;
  reducer_ = GetParam().make(&why);
  if (!reducer_) GTEST_SKIP() << why;
}

std::string ReducerCaseName(const ::testing::TestParamInfo<ReducerCase>& info) {
  return info.param.name;
}

namespace {

constexpr DType kTypes[] = {DType::kF32, DType::kF16, DType::kBF16};

// Allowed error relative to the sum of the magnitudes that went into an element (the scale of the
// rounding a sum can suffer when signs are mixed).
double Tolerance(DType out) {
  switch (out) {
    case DType::kF32:
      return 1e-6;
    case DType::kF16:
      return 1e-3;
    case DType::kBF16:
      return 1e-2;
  }
  return 0;
}

struct SumCase {
  std::vector<DType> in_types;
  DType out_type;
  size_t count;
  size_t offset;  // elements: 1 makes every pointer unaligned
  float scale;
  bool in_place;  // the output is input 0

  std::string Describe() const {
    std::ostringstream s;
    s << in_types.size() << " inputs (";
    for (DType t : in_types) s << NameOf(t) << ' ';
    s << ") -> " << NameOf(out_type) << ", " << count << " elements, offset " << offset
      << ", scale " << scale << (in_place ? ", in place" : "");
    return s.str();
  }
};

void CheckSum(Reducer& reducer, std::mt19937_64& rng, const SumCase& c) {
  SCOPED_TRACE(c.Describe());
  std::vector<HostArray> host;
  std::vector<std::unique_ptr<DeviceArray>> device;
  std::vector<ConstArray> inputs;
  for (DType t : c.in_types) {
    host.push_back(RandomArray(rng, t, c.count));
    device.push_back(std::make_unique<DeviceArray>(reducer, t, c.count, c.offset));
    device.back()->Upload(host.back());
    inputs.push_back(device.back()->as_input());
  }
  std::unique_ptr<DeviceArray> separate;
  if (!c.in_place) {
    separate = std::make_unique<DeviceArray>(reducer, c.out_type, c.count, c.offset);
    separate->Poison();
  }
  DeviceArray& out = c.in_place ? *device[0] : *separate;
  reducer.Sum(inputs, out.as_output(), c.count, c.scale);
  const HostArray got = out.Download();
  size_t bad = 0;
  for (size_t i = 0; i < c.count; ++i) {
    double reference = 0, magnitude = 0;
    for (const HostArray& in : host) {
      reference += in.Get(i);
      magnitude += std::abs(in.Get(i));
    }
    reference *= c.scale;
    magnitude *= std::abs(c.scale);
    const double g = got.Get(i);
    if (!(std::abs(g - reference) <= Tolerance(c.out_type) * magnitude) && ++bad <= 3) {
      ADD_FAILURE() << "element " << i << ": got " << g << ", float64 reference " << reference;
    }
  }
  EXPECT_EQ(bad, 0u) << "elements outside tolerance";
}

float RandomScale(std::mt19937_64& rng) {
  return static_cast<float>(std::uniform_real_distribution<double>(0.1, 1.5)(rng));
}

// Every input count, same-type and mixed inputs, every output type, odd sizes, unaligned pointers.
TEST_P(ReducerConformance, SumMatchesFloat64ForEveryInputCountAndType) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const size_t counts[] = {1, 7, 1031};
  for (size_t n = 1; n <= Reducer::kMaxInputs; ++n) {
    for (int mix = 0; mix < 4; ++mix) {  // 0..2: all inputs of one type; 3: types cycle
      for (DType out : kTypes) {
        SumCase c{{}, out, counts[(n + mix) % 3], n % 2, RandomScale(rng), false};
        for (size_t j = 0; j < n; ++j) c.in_types.push_back(kTypes[mix < 3 ? mix : (n + j) % 3]);
        CheckSum(*reducer_, rng, c);
      }
    }
  }
}

// Large enough to be split over threads and, out of place, written with streaming stores.
TEST_P(ReducerConformance, LargeSumsMatchFloat64) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  using T = DType;
  CheckSum(*reducer_, rng, {{T::kF32, T::kF32}, T::kF32, (4 << 20) / 4 + 13, 1, 1.f, false});
  CheckSum(*reducer_, rng, {{T::kF32, T::kF32}, T::kF32, (4 << 20) / 4 + 16, 0, 0.5f, false});
  CheckSum(*reducer_, rng, {{T::kBF16, T::kF16}, T::kF16, (4 << 20) / 2 + 5, 1, 0.5f, false});
  CheckSum(*reducer_, rng,
           {{T::kF16, T::kF16, T::kF16, T::kF16, T::kF16}, T::kBF16, 300007, 1, 0.2f, false});
  CheckSum(*reducer_, rng, {std::vector<T>(16, T::kF32), T::kF32, 300007, 0, 1.f / 16, false});
  // Half of the count a multiple of 64: a split over two threads must not drop the last element.
  CheckSum(*reducer_, rng, {{T::kF32, T::kF32}, T::kF32, 2 * 262144 + 1, 0, 1.f, false});
  CheckSum(*reducer_, rng, {{T::kF32, T::kF32}, T::kF32, 2 * 262144 + 1, 0, 1.f, true});
}

TEST_P(ReducerConformance, SumAccumulatesInPlace) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (DType t : kTypes) {
    for (size_t n : {1, 2, 3, 16}) {
      for (size_t count : {size_t{1031}, size_t{300007}}) {
        SumCase c{std::vector<DType>(n, t), t, count, n % 2, RandomScale(rng), true};
        if (n > 1) c.in_types[n - 1] = kTypes[n % 3];  // only input 0 must match the output
        CheckSum(*reducer_, rng, c);
      }
    }
  }
}

// Bit patterns of every kind (normal, subnormal, zero, infinity, NaN, ties) convert exactly as
// the scalar conversions of pacer/dtype.h do; a NaN must stay a NaN, whatever its payload.
TEST_P(ReducerConformance, CastMatchesScalarConversionsBitForBit) {
  std::mt19937_64 rng(FreshSeed());
  std::vector<uint32_t> f32_bits = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                    0x7fc00000u, 0x7f800001u, 0x00000001u, 0x477fe000u,
                                    0x477ff000u, 0x477ff001u, 0x33000000u, 0x33000001u,
                                    0x387fe000u, 0x3f808000u, 0x3f818000u, 0x3f800001u};
  while (f32_bits.size() < 200003) f32_bits.push_back(static_cast<uint32_t>(rng()));
  std::vector<uint16_t> half_bits(65536);
  for (size_t i = 0; i < half_bits.size(); ++i) half_bits[i] = static_cast<uint16_t>(i);

  auto run = [&](const void* src, DType from, DType to, size_t count) {
    DeviceArray in(*reducer_, from, count, 1), out(*reducer_, to, count, 1);
    HostArray host(from, count);
    std::memcpy(host.bytes.data(), src, host.bytes.size());
    in.Upload(host);
    out.Poison();
    reducer_->Cast(in.as_input(), out.as_output(), count);
    return out.Download();
  };
  auto same = [](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
  };
  for (DType to : {DType::kF16, DType::kBF16}) {
    const HostArray got = run(f32_bits.data(), DType::kF32, to, f32_bits.size());
    size_t bad = 0;
    for (size_t i = 0; i < f32_bits.size(); ++i) {
      float f;
      std::memcpy(&f, &f32_bits[i], 4);
      HostArray expected(to, 1);
      expected.Set(0, f);
      if (!same(got.Get(i), expected.Get(0)) && ++bad <= 3) {
        ADD_FAILURE() << "f32 bits 0x" << std::hex << f32_bits[i] << " -> " << NameOf(to)
                      << ": got " << got.Get(i) << ", expected " << expected.Get(0);
      }
    }
    EXPECT_EQ(bad, 0u);
  }
  for (DType from : {DType::kF16, DType::kBF16}) {
    for (DType to : kTypes) {
      const HostArray got = run(half_bits.data(), from, to, half_bits.size());
      HostArray source(from, half_bits.size());
      std::memcpy(source.bytes.data(), half_bits.data(), source.bytes.size());
      size_t bad = 0;
      for (size_t i = 0; i < half_bits.size(); ++i) {
        HostArray expected(to, 1);
        expected.Set(0, source.Get(i));
        if (!same(got.Get(i), expected.Get(0)) && ++bad <= 3) {
          ADD_FAILURE() << NameOf(from) << " bits 0x" << std::hex << i << " -> " << NameOf(to)
                        << ": got " << got.Get(i) << ", expected " << expected.Get(0);
        }
      }
      EXPECT_EQ(bad, 0u);
    }
  }
}

}  // namespace
}  // namespace pacer::testing
