#include "text_corpus.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace pacer {
namespace apps {
namespace {

void Add(std::string* text, std::vector<std::string>* entries) {
  if (!text->empty() && text->back() == ' ') text->pop_back();
  if (!text->empty()) entries->push_back(std::move(*text));
  text->clear();
}

}  // namespace

std::vector<std::string> LoadFortunes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, error)) {
    if (e.is_regular_file() && e.path().filename().string().find('.') == std::string::npos) {
      files.push_back(e.path());
    }
  }
  if (files.empty()) {
    throw std::runtime_error("no fortune files in " + dir +
                             (error ? " (" + error.message() + ")" : "") +
                             ": install Debian's fortunes package");
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> entries;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string line, text;
    while (std::getline(in, line)) {
      if (line == "%") {
        Add(&text, &entries);
        continue;
      }
      for (char c : line + " ") {
        const bool space = std::isspace(static_cast<unsigned char>(c));
        if (space && (text.empty() || text.back() == ' ')) continue;
        text.push_back(space ? ' ' : c);
      }
    }
    Add(&text, &entries);
  }
  return entries;
}

}  // namespace apps
}  // namespace pacer
