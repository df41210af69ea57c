#include "common/csv_file.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

std::string ReadRegularFile(const std::string& path, const char* what) {
  struct stat status;
  if (stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode)) {
    throw Error(StrCat(path, ": not a regular file"));
  }
  std::ifstream in(path);
  if (!in) throw Error(StrCat(path, ": cannot open the ", what));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> CsvFields(const std::string& line) {
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

double CsvNumber(const std::vector<std::string>& fields, size_t column, const std::string& where,
                 const std::string& name) {
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

}  // namespace pacer
