#include "common/compute_trace.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <sstream>

#include "common/csv_file.h"
#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

constexpr const char* kColumns[] = {"worker", "time", "batch_time_norm"};

}  // namespace

ComputeTrace ComputeTrace::Load(const std::string& path) {
  return Parse(ReadRegularFile(path, "trace"), path);
}

ComputeTrace ComputeTrace::Parse(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line)) throw Error(StrCat(name, ": empty, expected a header line"));
  const std::vector<std::string> header = CsvFields(line);
  size_t columns[3];
  for (int c = 0; c < 3; ++c) {
    const auto it = std::find(header.begin(), header.end(), kColumns[c]);
    if (it == header.end()) {
      throw Error(StrCat(name, ":1: no column '", kColumns[c], "' in the header '", line, "'"));
    }
    columns[c] = static_cast<size_t>(it - header.begin());
  }
  std::map<int, std::map<int64_t, double>> by_worker;
  std::vector<double> all;
  for (int number = 2; std::getline(lines, line); ++number) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> fields = CsvFields(line);
    const std::string where = StrCat(name, ":", number);
    const double worker = CsvNumber(fields, columns[0], where, kColumns[0]);
    const double iteration = CsvNumber(fields, columns[1], where, kColumns[1]);
    const double time = CsvNumber(fields, columns[2], where, kColumns[2]);
    if (worker != static_cast<int>(worker) || iteration != static_cast<int64_t>(iteration)) {
      throw Error(StrCat(where, ": worker and time must be whole numbers, not ", fields[columns[0]],
                         " and ", fields[columns[1]]));
    }
    by_worker[static_cast<int>(worker)][static_cast<int64_t>(iteration)] = time;
    all.push_back(time);
  }
  if (by_worker.empty()) throw Error(StrCat(name, ": no samples after the header"));
  ComputeTrace trace;
  const int workers = by_worker.rbegin()->first + 1;
  for (int w = 0; w < workers; ++w) {
    const auto it = by_worker.find(w);
    if (it == by_worker.end()) {
      throw Error(
          StrCat(name, ": worker ", w, " has no samples (workers 0..", workers - 1, " appear)"));
    }
    trace.samples_.emplace_back(it->second.begin(), it->second.end());
  }
  std::sort(all.begin(), all.end());
  const size_t half = all.size() / 2;
  trace.median_ = all.size() % 2 == 1 ? all[half] : (all[half - 1] + all[half]) / 2;
  return trace;
}

double ComputeTrace::TimeAt(int worker, int64_t iteration) const {
  const auto& samples = samples_.at(static_cast<size_t>(worker));
  auto after =
      std::upper_bound(samples.begin(), samples.end(), iteration,
                       [](int64_t i, const std::pair<int64_t, double>& s) { return i < s.first; });
  return after == samples.begin() ? samples.front().second : std::prev(after)->second;
}

double ComputeTrace::FastestAt(int64_t iteration) const {
  double fastest = TimeAt(0, iteration);
  for (int w = 1; w < workers(); ++w) fastest = std::min(fastest, TimeAt(w, iteration));
  return fastest;
}

}  // namespace pacer
