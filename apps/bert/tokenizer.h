#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace pacer {
namespace apps {

// A word-level tokenizer built from a corpus, for the BERT app: lower-cased words (runs of
// letters, digits and apostrophes) and single punctuation marks; the `vocab_size` - kSpecial most
// frequent become tokens (ties in first-seen order), the rest [UNK].
class Tokenizer {
 public:
  enum Special : int32_t { kPad = 0, kUnk = 1, kCls = 2, kSep = 3, kMask = 4, kSpecial = 5 };

  // Throws std::invalid_argument when vocab_size leaves no room for a word.
  Tokenizer(const std::vector<std::string>& corpus, int vocab_size);

  std::vector<int32_t> Encode(const std::string& text) const;
  // The token's text ("[UNK]" and the like for the special ones); throws std::out_of_range.
  const std::string& Token(int32_t id) const { return tokens_.at(id); }
  int vocab_size() const { return static_cast<int>(tokens_.size()); }

  // The words and marks of `text`, lower-cased, before the vocabulary.
  static std::vector<std::string> Split(const std::string& text);

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace apps
}  // namespace pacer
