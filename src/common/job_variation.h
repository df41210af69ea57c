#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pacer {

// One production job's spread between its workers, iteration by iteration
// (--inject=spread:PATH:job=K): row K of a CSV whose header names the iterations (",0,1,2,...")
// and whose rows are "job_NAME,cv,cv,...", each cv the coefficient of variation (stddev / mean)
// of the job's workers' mini-batch times in that iteration, as Alibaba PAI's
// ../shared/traces/pai-2020-minibatch/coefficient_variation.csv is. Empty cells (a job shorter
// than the table) keep the last value.
class JobVariation {
 public:
  // Throws pacer::Error naming the file, line and column of what is wrong: a job past the
  // file's, a field that is not a number or is negative, a job with no value.
  static JobVariation Load(const std::string& path, int job);
  // The same over `text`, the contents of a file named `name`.
  static JobVariation Parse(const std::string& text, const std::string& name, int job);

  const std::string& job() const { return job_; }
  int64_t iterations() const { return static_cast<int64_t>(cv_.size()); }
  // The coefficient of variation at `iteration`: the last iteration's past the recorded ones.
  double CvAt(int64_t iteration) const;

 private:
  std::string job_;
  std::vector<double> cv_;
};

}  // namespace pacer
