// Recorded compute traces (--inject=trace:PATH): parsing, each kind of bad row named by file, line
// and column, sparse samples, and the mapping of workers and clocks onto the trace, exact on a
// constructed trace of 3 workers and 4 samples.
#include "common/compute_trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "../common/error_of.h"
#include "common/fault_spec.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// 3 workers sampled at iterations 0, 10, 20, 30 (as PAI's traces: an unnamed first column, and
// `gpu` between, both ignored). Worker 1 turns slow at 20; worker 2 lacks the sample at 10.
const char* const kTrace =
    ",worker,gpu,time,batch_time_norm\n"
    "0,0,25,0,100\n1,1,25,0,110\n2,2,25,0,120\n"
    "3,0,25,10,100\n4,1,25,10,105\n"
    "5,0,25,20,100\n6,1,25,20,300\n7,2,25,20,90\n"
    "8,0,25,30,100\n9,1,25,30,300\n10,2,25,30,90\n";

std::string ErrorOf(const std::string& text) {
  try {
    ComputeTrace::Parse(text, "t.csv");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ComputeTraceTest, ReadsSparseSamplesAndKeepsTheLastOne) {
  const ComputeTrace t = ComputeTrace::Parse(kTrace, "t.csv");
  ASSERT_EQ(t.workers(), 3);
  EXPECT_EQ(t.TimeAt(1, 0), 110);
  EXPECT_EQ(t.TimeAt(1, 19), 105);  // between samples: the last one
  EXPECT_EQ(t.TimeAt(1, 20), 300);
  EXPECT_EQ(t.TimeAt(2, 15), 120);  // no sample at 10: still the one of 0
  EXPECT_EQ(t.TimeAt(2, 500), 90);  // past the end: the last sample
  EXPECT_EQ(t.FastestAt(5), 100);
  EXPECT_EQ(t.FastestAt(25), 90);
  // 11 samples: 90 90 100 100 100 100 105 110 120 300 300.
  EXPECT_EQ(t.median(), 100);
}

TEST(ComputeTraceTest, BadRowsAreNamedByFileLineAndColumn) {
  const std::string header = ",worker,gpu,time,batch_time_norm\n";
  EXPECT_EQ(ErrorOf(",worker,gpu,batch_time_norm\n0,0,25,1\n"),
            "t.csv:1: no column 'time' in the header ',worker,gpu,batch_time_norm'");
  EXPECT_EQ(ErrorOf(header + "0,0,25,1,47x\n"),
            "t.csv:2:5 (batch_time_norm): '47x' is not a number");
  EXPECT_EQ(ErrorOf(header + "0,0,25,1,40\n1,1,25,1,-3\n"),
            "t.csv:3:5 (batch_time_norm): -3 is negative");
  EXPECT_EQ(ErrorOf(header + "0,0,25,-10,40\n"), "t.csv:2:4 (time): -10 is negative");
  EXPECT_EQ(ErrorOf(header + "0,0,25\n"), "t.csv:2:4 (time): the row has no such column");
  EXPECT_EQ(ErrorOf(header + "0,0,25,1,40\n1,2,25,1,40\n"),
            "t.csv: worker 1 has no samples (workers 0..2 appear)");
  EXPECT_EQ(ErrorOf(header), "t.csv: no samples after the header");
}

TEST(ComputeTraceTest, InjectMapsWorkersAndClocksOntoTheTrace) {
  const std::string path = ::testing::TempDir() + "compute_trace_test.csv";
  std::ofstream(path) << kTrace;
  const FaultSpec f = FaultSpec::Parse("trace:" + path + ":from=10:scale=2");
  EXPECT_TRUE(f.Names(FaultSpec::Target::kWorker, 4));
  EXPECT_EQ(f.effect, FaultSpec::Effect::kCompute);
  // Clock 0 is trace iteration 10: worker 1 at 105 over the fastest 100.
  EXPECT_DOUBLE_EQ(f.MultiplierAt(1, 0, 1), 2 * 105.0 / 100);
  // Clock 10 is iteration 20: worker 1 at 300 over worker 2's 90; worker 4 is trace worker 1.
  EXPECT_DOUBLE_EQ(f.MultiplierAt(1, 10, 1), 2 * 300.0 / 90);
  EXPECT_DOUBLE_EQ(f.MultiplierAt(4, 10, 1), 2 * 300.0 / 90);
  EXPECT_DOUBLE_EQ(f.MultiplierAt(2, 10, 1), 2.0);
  EXPECT_DOUBLE_EQ(
      ActiveMultiplier({f}, FaultSpec::Target::kWorker, FaultSpec::Effect::kCompute, 0, 10, 0, 1),
      2 * 100.0 / 90);
  // to=median: over the median of every sample (100), whatever the iteration's fastest.
  const FaultSpec median = FaultSpec::Parse("trace:" + path + ":from=10:scale=2:to=median");
  EXPECT_DOUBLE_EQ(median.MultiplierAt(1, 10, 1), 2 * 300.0 / 100);
  EXPECT_DOUBLE_EQ(median.MultiplierAt(2, 10, 1), 2 * 90.0 / 100);
  // workers=: the listed trace workers in turn; worker 0 replays trace worker 2, worker 3 too.
  const FaultSpec listed = FaultSpec::Parse("trace:" + path + ":from=10:workers=2+1");
  EXPECT_DOUBLE_EQ(listed.MultiplierAt(0, 10, 1), 1.0);  // 90 over the fastest, 90
  EXPECT_DOUBLE_EQ(listed.MultiplierAt(1, 10, 1), 300.0 / 90);
  EXPECT_DOUBLE_EQ(listed.MultiplierAt(2, 10, 1), 1.0);
  EXPECT_DOUBLE_EQ(listed.MultiplierAt(3, 10, 1), 300.0 / 90);
  // It combines with the other specs: their multipliers multiply.
  EXPECT_DOUBLE_EQ(
      ActiveMultiplier({f, FaultSpec::Parse("worker:0:compute=3x")}, FaultSpec::Target::kWorker,
                       FaultSpec::Effect::kCompute, 0, 10, 0, 1),
      3 * 2 * 100.0 / 90);
  std::remove(path.c_str());
}

TEST(ComputeTraceTest, BadTraceSpecsNameTheSpecAndTheFile) {
  const auto error = [](const std::string& spec) {
    return testing::ErrorOf<std::invalid_argument>([&] { FaultSpec::Parse(spec); });
  };
  EXPECT_EQ(error("trace:/no/such.csv"),
            "--inject=trace:/no/such.csv: /no/such.csv: cannot open "
            "the trace");
  EXPECT_EQ(error("trace:/dev/zero"), "--inject=trace:/dev/zero: /dev/zero: not a regular file");
  const std::string path = ::testing::TempDir() + "compute_trace_bad.csv";
  std::ofstream(path) << ",worker,gpu,time,batch_time_norm\n0,0,25,1,x\n";
  EXPECT_EQ(error("trace:" + path),
            "--inject=trace:" + path + ": " + path + ":2:5 (batch_time_norm): 'x' is not a number");
  std::ofstream(path) << kTrace;
  EXPECT_EQ(error("trace:" + path + ":from=-1"),
            "--inject=trace:" + path + ":from=-1: '-1' is not a count");
  EXPECT_EQ(error("trace:" + path + ":scale=0"),
            "--inject=trace:" + path + ":scale=0: '0' is not a positive scale");
  EXPECT_EQ(
      error("trace:" + path + ":speed=2"),
      "--inject=trace:" + path +
          ":speed=2: 'speed=2' is not a trace option: from=N, scale=F, to=fastest, to=median or "
          "workers=A+B+...");
  EXPECT_EQ(error("trace:" + path + ":workers=0+3"),
            "--inject=trace:" + path + ":workers=0+3: worker 3 is not in the trace (workers 0..2)");
  EXPECT_EQ(error("trace:" + path + ":workers=0+x"),
            "--inject=trace:" + path + ":workers=0+x: 'x' is not a count");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pacer
