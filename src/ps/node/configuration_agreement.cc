#include "ps/node/configuration_agreement.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/config_options.h"
#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

// One rank's part: its problem, then its job-wide values, '\n'-separated (values hold no
// newline: flags are single lines).
Bootstrap::Bytes Encode(const Config& config, const std::string& problem) {
  std::string text = problem;
  for (const auto& [flag, value] : JobWideOptions(config)) text += "\n" + value;
  return Bootstrap::Bytes(text.begin(), text.end());
}

// A rank's part back as its problem and values; every field is there, empty where the part was
// cut short.
std::vector<std::string> Decode(const Bootstrap::Bytes& part, size_t options) {
  std::vector<std::string> fields;
  std::istringstream text(std::string(part.begin(), part.end()));
  for (std::string field; std::getline(text, field);) fields.push_back(field);
  fields.resize(options + 1);
  return fields;
}

}  // namespace

void AgreeOnConfiguration(Bootstrap& bootstrap, const Config& config, const std::string& problem,
                          std::chrono::milliseconds timeout) {
  const std::vector<Bootstrap::Bytes> parts = bootstrap.AllGather(Encode(config, problem), timeout);
  const auto options = JobWideOptions(config);
  std::vector<std::vector<std::string>> fields;
  for (const Bootstrap::Bytes& part : parts) fields.push_back(Decode(part, options.size()));
  std::vector<int> with_problem;
  for (int rank = 0; rank < static_cast<int>(fields.size()); ++rank) {
    if (!fields[rank][0].empty()) with_problem.push_back(rank);
  }
  if (!with_problem.empty()) {
    const int first = with_problem[0];
    const size_t n = with_problem.size();
    if (n == parts.size()) throw Error(fields[first][0]);
    throw Error(StrCat("rank ", first, n > 1 ? StrCat(" (and ", n - 1, " more)") : "", ": ",
                       fields[first][0]));
  }
  for (int rank = 1; rank < static_cast<int>(fields.size()); ++rank) {
    for (size_t i = 0; i < options.size(); ++i) {
      const std::string& mine = fields[0][i + 1];
      const std::string& theirs = fields[rank][i + 1];
      if (mine != theirs) {
        throw Error(StrCat("--", options[i].first, " differs between ranks: rank 0 has '", mine,
                           "', rank ", rank, " has '", theirs,
                           "' (set it the same on every rank, flag or PACER_ environment)"));
      }
    }
  }
}

}  // namespace pacer
