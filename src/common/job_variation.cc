#include "common/job_variation.h"

#include <algorithm>
#include <sstream>

#include "common/csv_file.h"
#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

JobVariation JobVariation::Load(const std::string& path, int job) {
  return Parse(ReadRegularFile(path, "table of coefficients of variation"), path, job);
}

JobVariation JobVariation::Parse(const std::string& text, const std::string& name, int job) {
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line)) throw Error(StrCat(name, ": empty, expected a header line"));
  int jobs = 0;
  for (int number = 2; std::getline(lines, line); ++number) {
    if (line.empty() || line == "\r") continue;
    if (jobs++ != job) continue;
    const std::vector<std::string> fields = CsvFields(line);
    JobVariation variation;
    variation.job_ = fields[0];
    const std::string where = StrCat(name, ":", number);
    size_t last = fields.size();
    while (last > 1 && fields[last - 1].empty()) --last;
    if (last == 1) throw Error(StrCat(where, ": job ", job, " (", fields[0], ") has no value"));
    for (size_t column = 1; column < last; ++column) {
      variation.cv_.push_back(fields[column].empty() && !variation.cv_.empty()
                                  ? variation.cv_.back()
                                  : CsvNumber(fields, column, where, "cv"));
    }
    return variation;
  }
  throw Error(StrCat(name, ": no job ", job, ": the file has ", jobs, " (0..", jobs - 1, ")"));
}

double JobVariation::CvAt(int64_t iteration) const {
  return cv_[static_cast<size_t>(std::clamp<int64_t>(iteration, 0, iterations() - 1))];
}

}  // namespace pacer
