// The CUDA reducer: the conformance tests every back end passes, and what only CUDA has (host
// operands staged through page-locked buffers, device memory for the optimizer, grids that stride).

#include "cuda/cuda_reducer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../common/reducer_conformance.h"
#include "../common/reducer_reference.h"
#include "pacer/error.h"

namespace pacer::testing {
namespace {

// Without a usable device the tests skip, unless PACER_REQUIRE_CUDA is set: on a GPU machine a
// skip would hide that nothing ran.
std::unique_ptr<Reducer> MakeCudaOrExplain(std::string* why_not) {
  std::unique_ptr<Reducer> reducer = MakeCudaReducer(why_not);
  if (!reducer && std::getenv("PACER_REQUIRE_CUDA") != nullptr) {
    // Fatal, so the test body does not run without a reducer; FAIL() returns, hence the lambda.
    [&] { FAIL() << "PACER_REQUIRE_CUDA is set, but " << *why_not; }();
  }
  return reducer;
}

INSTANTIATE_TEST_SUITE_P(Cuda, ReducerConformance,
                         ::testing::Values(ReducerCase{"cuda", MakeCudaOrExplain}),
                         ReducerCaseName);

class CudaReducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    reducer_ = MakeCudaOrExplain(&why);
    if (!reducer_) GTEST_SKIP() << why;
  }
  std::unique_ptr<Reducer> reducer_;
};

// Where each operand of a sum lives.
struct Placement {
  const char* name;
  bool inputs_on_host;
  bool odd_inputs_only;  // with inputs_on_host: inputs 1, 3, ... on the host, the others not
  bool out_on_host;
  bool in_place;  // the output is input 0
};

struct BitsCase {
  std::vector<DType> in_types;
  DType out_type;
  size_t count;
  bool same_offsets;  // every pointer one element past alignment (else input k is k % 2 past)
  Placement placement;
};

// One operand in host or device memory, `offset` elements past where its allocation starts.
class Operand {
 public:
  Operand(Reducer& reducer, DType type, size_t count, size_t offset, bool on_host)
      : type_(type), count_(count) {
    if (on_host) {
      host_.assign((count + offset) * SizeOf(type), 0xFF);
      data_ = host_.data() + offset * SizeOf(type);
    } else {
      device_ = std::make_unique<DeviceArray>(reducer, type, count, offset);
      device_->Poison();
      data_ = device_->data();
    }
  }
  void Fill(const HostArray& values) {
    if (device_) return device_->Upload(values);
    std::memcpy(data_, values.bytes.data(), values.bytes.size());
  }
  HostArray Read() const {
    if (device_) return device_->Download();
    HostArray values(type_, count_);
    std::memcpy(values.bytes.data(), data_, values.bytes.size());
    return values;
  }
  void* data() const { return data_; }

 private:
  DType type_;
  size_t count_;
  std::vector<uint8_t> host_;
  std::unique_ptr<DeviceArray> device_;
  void* data_ = nullptr;
};

// The CPU back end adds in the same order and rounds the same way, so the CUDA sum must give its
// bits exactly; the conformance tests hold the CPU back end to a float64 reference.
void ExpectCpuBits(Reducer& cuda, std::mt19937_64& rng, const BitsCase& c) {
  const Placement& p = c.placement;
  SCOPED_TRACE(std::string(p.name) + ", " + std::to_string(c.in_types.size()) + " inputs -> " +
               NameOf(c.out_type) + ", " + std::to_string(c.count) + " elements");
  const float scale = 0.37f;
  std::vector<HostArray> values;
  std::vector<std::unique_ptr<Operand>> operands;
  std::vector<ConstArray> cpu_inputs, cuda_inputs;
  for (size_t k = 0; k < c.in_types.size(); ++k) {
    const DType t = c.in_types[k];
    values.push_back(RandomArray(rng, t, c.count));
    const bool on_host = p.inputs_on_host && (!p.odd_inputs_only || k % 2 == 1);
    operands.push_back(
        std::make_unique<Operand>(cuda, t, c.count, c.same_offsets ? 1 : k % 2, on_host));
    operands.back()->Fill(values.back());
    cpu_inputs.push_back({values.back().bytes.data(), t});
    cuda_inputs.push_back({operands.back()->data(), t});
  }
  HostArray expected(c.out_type, c.count);
  MakeCpuReducer()->Sum(cpu_inputs, {expected.bytes.data(), c.out_type}, c.count, scale);

  std::unique_ptr<Operand> separate_out;
  if (!p.in_place) {
    separate_out = std::make_unique<Operand>(cuda, c.out_type, c.count, 1, p.out_on_host);
  }
  const Operand& out = p.in_place ? *operands[0] : *separate_out;
  cuda.Sum(cuda_inputs, {out.data(), c.out_type}, c.count, scale);
  const HostArray got = out.Read();
  const size_t size = SizeOf(c.out_type);
  for (size_t i = 0; i < c.count; ++i) {
    if (std::memcmp(&got.bytes[i * size], &expected.bytes[i * size], size) != 0) {
      FAIL() << "element " << i << ": got " << got.Get(i) << ", CPU back end " << expected.Get(i);
    }
  }
}

constexpr Placement kOnDevice{"all on the device", false, false, false, false};

// Counts past one grid's reach (blocks x threads x 4 chunks of 8 elements per pass), through the
// 16-byte path (operands equally misaligned) and the element path (misaligned differently).
TEST_F(CudaReducerTest, LargeSumsStrideOverTheGrid) {
  std::mt19937_64 rng(FreshSeed());
  using T = DType;
  ExpectCpuBits(*reducer_, rng, {{T::kF32, T::kF32}, T::kF32, (20 << 20) + 3, true, kOnDevice});
  ExpectCpuBits(*reducer_, rng,
                {{T::kF16, T::kBF16, T::kF32}, T::kBF16, (3 << 20) + 1, false, kOnDevice});
}

// Host operands go through the staging pipeline in several chunks, whatever mix of host and
// device memory, for sums, casts (one input) and in-place sums.
TEST_F(CudaReducerTest, HostOperandsAreStagedInChunks) {
  std::mt19937_64 rng(FreshSeed());
  using T = DType;
  const std::vector<T> four = {T::kF32, T::kBF16, T::kF16, T::kF32};
  const size_t count = (3 << 20) + 5;
  const Placement all_host{"all on the host", true, false, true, false};
  ExpectCpuBits(*reducer_, rng, {four, T::kF32, count, false, all_host});
  ExpectCpuBits(*reducer_, rng,
                {four, T::kBF16, count, true, {"inputs on the host", true, false, false, false}});
  ExpectCpuBits(*reducer_, rng,
                {four, T::kF16, count, false, {"output on the host", false, false, true, false}});
  ExpectCpuBits(*reducer_, rng,
                {four, T::kF32, count, false, {"odd inputs on the host", true, true, true, false}});
  ExpectCpuBits(*reducer_, rng,
                {std::vector<T>(16, T::kF32), T::kF32, (1 << 20) + 3, false, all_host});
  ExpectCpuBits(*reducer_, rng, {{T::kF32}, T::kBF16, count, true, all_host});
  ExpectCpuBits(*reducer_, rng,
                {{T::kBF16, T::kF32},
                 T::kBF16,
                 count,
                 false,
                 {"in place on the host", true, false, true, true}});
}

// A kernel touching host memory would fault and take the CUDA context down with it.
TEST_F(CudaReducerTest, OptimizerStepsRejectHostMemory) {
  using ::testing::HasSubstr;
  using ::testing::ThrowsMessage;
  Reducer& r = *reducer_;
  std::vector<float> host(64, 1.f);
  DeviceArray w(r, DType::kF32, 64, 0), m(r, DType::kF32, 64, 0), g(r, DType::kF16, 64, 0);
  float* device_w = static_cast<float*>(w.data());
  float* device_m = static_cast<float*>(m.data());
  SgdParams sgd;
  sgd.momentum = 0.9f;
  EXPECT_THAT([&] { r.SgdStep(sgd, host.data(), device_m, g.as_input(), 64); },
              ThrowsMessage<Error>(HasSubstr("weights is host memory")));
  EXPECT_THAT(
      [&] { r.SgdStep(sgd, device_w, host.data(), g.as_input(), 64); },
      ThrowsMessage<Error>(HasSubstr("momentum buffer (momentum is not 0) is host memory")));
  const ConstArray host_grad{host.data(), DType::kF32};
  EXPECT_THAT([&] { r.AdamStep(AdamParams(), device_w, device_m, device_m, host_grad, 64); },
              ThrowsMessage<Error>(HasSubstr("gradient is host memory")));
}

TEST_F(CudaReducerTest, DescribesTheDevice) {
  EXPECT_EQ(reducer_->device(), Device::kCuda);
  const std::string description = reducer_->Describe();
  EXPECT_EQ(description.rfind("cuda ", 0), 0u) << description;
  EXPECT_NE(description.find(" sm_"), std::string::npos) << description;
}

}  // namespace
}  // namespace pacer::testing
