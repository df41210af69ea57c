// A production job's spread between workers (--inject=spread:PATH:job=K): the table's rows, each
// kind of bad row named by file, line and column, and the draws: a lognormal of mean 1 with the
// job's coefficient of variation, reproducible from the seed.
#include "common/job_variation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "../common/error_of.h"
#include "common/fault_spec.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// Three jobs over 4 iterations; job_01 was recorded for 2 (its last cells empty).
const char* const kTable =
    ",0,1,2,3\n"
    "job_00,0.1,0.2,0.3,0.4\n"
    "job_01,0.05,0.5,,\n"
    "job_02,0,0,0,0\n";

std::string ErrorOf(const std::string& text, int job) {
  try {
    JobVariation::Parse(text, "cv.csv", job);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JobVariationTest, ReadsAJobsRowAndKeepsItsLastValue) {
  const JobVariation j = JobVariation::Parse(kTable, "cv.csv", 1);
  EXPECT_EQ(j.job(), "job_01");
  EXPECT_EQ(j.iterations(), 2);
  EXPECT_EQ(j.CvAt(0), 0.05);
  EXPECT_EQ(j.CvAt(1), 0.5);
  EXPECT_EQ(j.CvAt(7), 0.5);  // past the recorded iterations: the last value
  EXPECT_EQ(JobVariation::Parse(kTable, "cv.csv", 0).CvAt(3), 0.4);
}

TEST(JobVariationTest, BadRowsAreNamedByFileLineAndColumn) {
  EXPECT_EQ(ErrorOf(kTable, 3), "cv.csv: no job 3: the file has 3 (0..2)");
  EXPECT_EQ(ErrorOf(",0,1\njob_00,0.1,x\n", 0), "cv.csv:2:3 (cv): 'x' is not a number");
  EXPECT_EQ(ErrorOf(",0,1\njob_00,-0.1,0.2\n", 0), "cv.csv:2:2 (cv): -0.1 is negative");
  EXPECT_EQ(ErrorOf(",0,1\njob_00,,0.2\n", 0), "cv.csv:2:2 (cv): '' is not a number");
  EXPECT_EQ(ErrorOf(",0,1\njob_00,0.1\njob_01,,\n", 1), "cv.csv:3: job 1 (job_01) has no value");
  EXPECT_EQ(ErrorOf("", 0), "cv.csv: empty, expected a header line");
}

// Draws for `workers` workers over `iterations` iterations: their mean and coefficient of
// variation.
std::pair<double, double> MeanAndCv(const FaultSpec& f, int workers, int iterations,
                                    uint64_t seed) {
  double sum = 0, squares = 0;
  for (int w = 0; w < workers; ++w) {
    for (int i = 0; i < iterations; ++i) {
      const double m = f.MultiplierAt(w, i, seed);
      sum += m;
      squares += m * m;
    }
  }
  const double n = workers * iterations;
  const double mean = sum / n;
  return {mean, std::sqrt(squares / n - mean * mean) / mean};
}

TEST(JobVariationTest, SpreadDrawsALognormalOfMeanOneWithTheJobsVariation) {
  const std::string path = ::testing::TempDir() + "job_variation_test.csv";
  std::ofstream(path) << ",0\njob_00,0.2\njob_01,0\njob_02,0.8\n";
  const FaultSpec f = FaultSpec::Parse("spread:" + path + ":job=0");
  EXPECT_TRUE(f.Names(FaultSpec::Target::kWorker, 7));
  EXPECT_EQ(f.effect, FaultSpec::Effect::kCompute);
  // 20,000 draws: the mean's standard error is 0.0014.
  const auto [mean, cv] = MeanAndCv(f, 10, 2000, 1);
  EXPECT_NEAR(mean, 1.0, 0.01);
  EXPECT_NEAR(cv, 0.2, 0.01);
  // A wide spread tells the lognormal's parameters apart: sigma^2 = cv^2 would read 0.95, and a
  // mu of 0 a mean of 1.28.
  const auto [wide_mean, wide_cv] =
      MeanAndCv(FaultSpec::Parse("spread:" + path + ":job=2"), 10, 2000, 1);
  EXPECT_NEAR(wide_mean, 1.0, 0.03);
  EXPECT_NEAR(wide_cv, 0.8, 0.05);
  // Reproducible from (seed, worker, iteration); another seed draws otherwise.
  EXPECT_EQ(f.MultiplierAt(3, 17, 1), f.MultiplierAt(3, 17, 1));
  EXPECT_NE(f.MultiplierAt(3, 17, 1), f.MultiplierAt(3, 17, 2));
  EXPECT_NE(f.MultiplierAt(3, 17, 1), f.MultiplierAt(4, 17, 1));
  // A job whose workers never differ slows nobody.
  EXPECT_EQ(FaultSpec::Parse("spread:" + path + ":job=1").MultiplierAt(3, 17, 1), 1.0);
  std::remove(path.c_str());
}

TEST(JobVariationTest, BadSpreadSpecsNameTheSpecAndTheFile) {
  const auto error = [](const std::string& spec) {
    return testing::ErrorOf<std::invalid_argument>([&] { FaultSpec::Parse(spec); });
  };
  const std::string path = ::testing::TempDir() + "job_variation_bad.csv";
  std::ofstream(path) << kTable;
  EXPECT_EQ(error("spread:" + path),
            "--inject=spread:" + path + ": expected spread:PATH:job=K[:from=N]");
  EXPECT_EQ(error("spread:" + path + ":job=5"),
            "--inject=spread:" + path + ":job=5: " + path + ": no job 5: the file has 3 (0..2)");
  EXPECT_EQ(error("spread:" + path + ":job=1:scale=2"), "--inject=spread:" + path +
                                                            ":job=1:scale=2: 'scale=2' is not a "
                                                            "spread option: job=K or from=N");
  EXPECT_EQ(error("spread:/dev/zero:job=0"),
            "--inject=spread:/dev/zero:job=0: /dev/zero: not a regular file");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pacer
