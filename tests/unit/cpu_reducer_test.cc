#include "ps/reduce/cpu_reducer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "../common/reducer_conformance.h"
#include "../common/reducer_reference.h"
#include "pacer/error.h"
#include "ps/reduce/kernel_table.h"

namespace pacer::testing {
namespace {

// Every instruction set this CPU has, on the calling thread alone and split over two threads.
std::vector<ReducerCase> CpuCases() {
  std::vector<ReducerCase> cases;
  for (const reduce::KernelTable* table : reduce::SupportedKernels()) {
    for (int threads : {1, 2}) {
      cases.push_back(
          {std::string(table->isa) + "_" + std::to_string(threads) + "threads",
           [table, threads](std::string*) { return reduce::MakeCpuReducer(threads, *table); }});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cpu, ReducerConformance, ::testing::ValuesIn(CpuCases()), ReducerCaseName);

TEST(CpuReducer, EveryInstructionSetAndThreadCountGivesTheSameBits) {
  std::mt19937_64 rng(FreshSeed());
  const size_t count = 1 << 20 | 3;
  std::vector<HostArray> inputs;
  std::vector<ConstArray> views;
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kF32}) {
    inputs.push_back(RandomArray(rng, t, count));
  }
  for (const HostArray& in : inputs) views.push_back({in.bytes.data(), in.type});
  std::vector<uint8_t> first;
  for (const reduce::KernelTable* table : reduce::SupportedKernels()) {
    for (int threads : {1, 2}) {
      HostArray out(DType::kF32, count);
      reduce::MakeCpuReducer(threads, *table)
          ->Sum(views, {out.bytes.data(), out.type}, count, 0.3f);
      if (first.empty()) first = out.bytes;
      EXPECT_TRUE(out.bytes == first) << table->isa << " with " << threads << " threads";
    }
  }
}

TEST(CpuReducer, DescribesInstructionSetAndThreads) {
  const std::string best = reduce::SupportedKernels().back()->isa;
  EXPECT_EQ(MakeCpuReducer(2)->Describe(), "cpu " + best + ", 2 threads");
  EXPECT_EQ(MakeReducer(Device::kCpu, 1)->Describe(), "cpu " + best + ", 1 thread");
}

TEST(CpuReducer, EnvironmentCapsTheInstructionSet) {
  setenv("PACER_CPU_ISA", "portable", 1);
  const std::string capped = MakeCpuReducer(1)->Describe();
  unsetenv("PACER_CPU_ISA");
  EXPECT_EQ(capped, "cpu portable, 1 thread");
}

TEST(ScalarConversions, RoundToNearestEvenAtTheEdges) {
  EXPECT_EQ(FloatToF16(1.f), 0x3c00);
  EXPECT_EQ(FloatToF16(65504.f), 0x7bff);
  EXPECT_EQ(FloatToF16(65519.f), 0x7bff);
  EXPECT_EQ(FloatToF16(65520.f), 0x7c00);  // the tie rounds to the even side: infinity
  EXPECT_EQ(FloatToF16(-0.f), 0x8000);
  EXPECT_EQ(FloatToF16(5.9604644775390625e-08f), 0x0001);   // 2^-24, the smallest subnormal
  EXPECT_EQ(FloatToF16(2.98023223876953125e-08f), 0x0000);  // 2^-25: a tie, to even
  EXPECT_EQ(FloatToF16(4.4703483581542969e-08f), 0x0001);   // 1.5 * 2^-25 rounds up
  EXPECT_EQ(FloatToF16(1.f + 1.f / 2048), 0x3c00);          // tie between 0x3c00 and 0x3c01
  EXPECT_EQ(FloatToF16(1.f + 3.f / 2048), 0x3c02);          // tie between 0x3c01 and 0x3c02
  EXPECT_EQ(F16ToFloat(0x0001), 5.9604644775390625e-08f);
  EXPECT_EQ(F16ToFloat(0xfbff), -65504.f);
  EXPECT_EQ(FloatToBf16(1.f + 1.f / 256), 0x3f80);  // tie to even
  EXPECT_EQ(FloatToBf16(1.f + 3.f / 256), 0x3f82);
  EXPECT_EQ(Bf16ToFloat(0x3f80), 1.f);
  EXPECT_TRUE(std::isnan(F16ToFloat(FloatToF16(std::nanf("")))));
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(std::nanf("")))));
  EXPECT_EQ(ParseDType("bf16"), DType::kBF16);
  EXPECT_THROW(ParseDType("f64"), Error);
}

}  // namespace
}  // namespace pacer::testing
