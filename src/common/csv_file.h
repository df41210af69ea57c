#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pacer {

// What the trace readers share: a whole file read at once, and a CSV row's fields.

// The contents of `path`, which must be a regular file (a device or a pipe could be endless, as
// in trace:/dev/zero). Throws pacer::Error naming the path and `what` it should hold.
std::string ReadRegularFile(const std::string& path, const char* what);

// A CSV line's fields, empty ones kept (the traces' first column has no name), '\r' dropped.
std::vector<std::string> CsvFields(const std::string& line);

// The field at `column` (0-based) of a row as a number that must not be negative. Throws
// pacer::Error naming `where` (file:line), the column (1-based) and its `name`.
double CsvNumber(const std::vector<std::string>& fields, size_t column, const std::string& where,
                 const std::string& name);

}  // namespace pacer
