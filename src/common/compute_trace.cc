#include "common/compute_trace.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

constexpr const char* kColumns[] = {"worker", "time", "batch_time_norm"};

// A CSV line's fields, empty ones kept (the traces' first column has no name).
std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> fields(1);
  for (char c : line) {
    if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

// The field at `column` (0-based) of a row, as a number that must not be negative.
double Number(const std::vector<std::string>& fields, size_t column, const std::string& where,
              const char* name) {
  const std::string where_column = StrCat(where, ":", column + 1, " (", name, ")");
  if (column >= fields.size()) throw Error(StrCat(where_column, ": the row has no such column"));
  const std::string& text = fields[column];
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') {
    throw Error(StrCat(where_column, ": '", text, "' is not a number"));
  }
  if (value < 0) throw Error(StrCat(where_column, ": ", text, " is negative"));
  return value;
}

}  // namespace

ComputeTrace ComputeTrace::Load(const std::string& path) {
  // A device or a pipe could be endless (a spec such as trace:/dev/zero).
  struct stat status;
  if (stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode)) {
    throw Error(StrCat(path, ": not a regular file"));
  }
  std::ifstream in(path);
  if (!in) throw Error(StrCat(path, ": cannot open the trace"));
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

ComputeTrace ComputeTrace::Parse(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line)) throw Error(StrCat(name, ": empty, expected a header line"));
  const std::vector<std::string> header = Fields(line);
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
    const std::vector<std::string> fields = Fields(line);
    const std::string where = StrCat(name, ":", number);
    const double worker = Number(fields, columns[0], where, kColumns[0]);
    const double iteration = Number(fields, columns[1], where, kColumns[1]);
    const double time = Number(fields, columns[2], where, kColumns[2]);
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
