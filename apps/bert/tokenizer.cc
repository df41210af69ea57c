#include "tokenizer.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace pacer {
namespace apps {

std::vector<std::string> Tokenizer::Split(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '\'') {
      word.push_back(static_cast<char>(std::tolower(u)));
      continue;
    }
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
    if (!std::isspace(u)) words.emplace_back(1, c);
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

Tokenizer::Tokenizer(const std::vector<std::string>& corpus, int vocab_size)
    : tokens_{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
  if (vocab_size <= kSpecial) {
    throw std::invalid_argument("a vocabulary of " + std::to_string(vocab_size) +
                                " tokens leaves no room beside the " + std::to_string(kSpecial) +
                                " special ones");
  }
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> counts;  // count, first seen
  int64_t seen = 0;
  for (const std::string& text : corpus) {
    for (std::string& w : Split(text)) {
      auto [it, fresh] = counts.try_emplace(std::move(w), 0, seen);
      ++it->second.first;
      seen += fresh;
    }
  }
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> sorted(counts.begin(),
                                                                          counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first
                                            : a.second.second < b.second.second;
  });
  for (int i = 0; i < static_cast<int>(sorted.size()) && vocab_size > this->vocab_size(); ++i) {
    tokens_.push_back(sorted[i].first);
  }
  for (int32_t id = 0; id < this->vocab_size(); ++id) ids_.emplace(tokens_[id], id);
}

std::vector<int32_t> Tokenizer::Encode(const std::string& text) const {
  std::vector<int32_t> ids;
  for (const std::string& w : Split(text)) {
    auto it = ids_.find(w);
    ids.push_back(it == ids_.end() ? kUnk : it->second);
  }
  return ids;
}

}  // namespace apps
}  // namespace pacer
