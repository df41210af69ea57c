// pacer-bert's data: the fortunes corpus from Debian's package, the tokenizer built from it, and
// masked-language-model sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "masked_batch.h"
#include "text_corpus.h"
#include "tokenizer.h"

namespace pacer {
namespace apps {
namespace {

TEST(TextCorpusTest, ReadsEveryFortuneAsOneEntry) {
  const std::vector<std::string> entries = LoadFortunes();
  // The package's 2.6 MB of English hold thousands of entries; none keeps a separator or an
  // untidy space.
  EXPECT_GT(entries.size(), 5000u);
  size_t bytes = 0;
  for (const std::string& e : entries) {
    ASSERT_FALSE(e.empty());
    ASSERT_NE(e, "%");
    ASSERT_EQ(e.find("  "), std::string::npos) << e;
    ASSERT_NE(e.front(), ' ');
    ASSERT_NE(e.back(), ' ');
    bytes += e.size();
  }
  EXPECT_GT(bytes, 1000000u);
  EXPECT_THROW(LoadFortunes("/nonexistent"), std::runtime_error);
}

TEST(TokenizerTest, SplitsWordsAndMarksAndKeepsTheMostFrequent) {
  EXPECT_EQ(Tokenizer::Split("Don't  PANIC, Arthur!"),
            (std::vector<std::string>{"don't", "panic", ",", "arthur", "!"}));
  const Tokenizer t({"the cat saw the dog.", "The dog ran!"}, Tokenizer::kSpecial + 3);
  // "the" x3, then "dog" x2 and "." x1 ... "dog" beats the words seen once; "cat" is the
  // first-seen of those.
  EXPECT_EQ(t.vocab_size(), 8);
  EXPECT_EQ(t.Token(Tokenizer::kSpecial), "the");
  EXPECT_EQ(t.Token(Tokenizer::kSpecial + 1), "dog");
  EXPECT_EQ(t.Token(Tokenizer::kSpecial + 2), "cat");
  EXPECT_EQ(t.Encode("The dog saw a cat"),
            (std::vector<int32_t>{5, 6, Tokenizer::kUnk, Tokenizer::kUnk, 7}));
  EXPECT_EQ(t.Token(Tokenizer::kMask), "[MASK]");
  EXPECT_THROW(Tokenizer({"a"}, Tokenizer::kSpecial), std::invalid_argument);
}

TEST(MaskedBatchTest, MasksAboutFifteenPercentTheSameWayOnEveryWorker) {
  std::vector<int32_t> stream(1000);
  for (size_t i = 0; i < stream.size(); ++i) stream[i] = 5 + static_cast<int32_t>(i % 95);
  std::vector<int64_t> ids(400);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
  const int length = 34;
  const MaskedBatch b = MaskSequences(stream, ids, length, 100, 2, 3, 4, 5, /*seed=*/7);
  ASSERT_EQ(b.input.size(), ids.size() * length);
  int chosen = 0, masked = 0, kept = 0;
  for (size_t s = 0; s < ids.size(); ++s) {
    const int32_t* in = &b.input[s * length];
    const int32_t* label = &b.labels[s * length];
    EXPECT_EQ(in[0], 2);
    EXPECT_EQ(in[length - 1], 3);
    EXPECT_EQ(label[0], MaskedBatch::kIgnore);
    EXPECT_EQ(label[length - 1], MaskedBatch::kIgnore);
    int in_sequence = 0;
    for (int p = 1; p < length - 1; ++p) {
      const int32_t original = stream[(ids[s] * (length - 2) + p - 1) % stream.size()];
      if (label[p] == MaskedBatch::kIgnore) {
        ASSERT_EQ(in[p], original) << "an unchosen token changed";
        continue;
      }
      ASSERT_EQ(label[p], original);
      ++chosen;
      ++in_sequence;
      masked += in[p] == 4;
      kept += in[p] == original;
    }
    EXPECT_GE(in_sequence, 1) << "sequence " << s << " teaches nothing";
  }
  const double positions = static_cast<double>(ids.size() * (length - 2));
  EXPECT_NEAR(chosen / positions, 0.15, 0.02);
  EXPECT_NEAR(static_cast<double>(masked) / chosen, 0.8, 0.04);
  EXPECT_NEAR(static_cast<double>(kept) / chosen, 0.1, 0.04);  // and ~1% random hits
  // Another worker cutting sequence 17 alone gets the same tokens and labels.
  const MaskedBatch one = MaskSequences(stream, {17}, length, 100, 2, 3, 4, 5, 7);
  EXPECT_TRUE(std::equal(one.input.begin(), one.input.end(), b.input.begin() + 17 * length));
  EXPECT_TRUE(std::equal(one.labels.begin(), one.labels.end(), b.labels.begin() + 17 * length));
  EXPECT_THROW(MaskSequences({}, {0}, length, 100, 2, 3, 4, 5, 7), std::invalid_argument);
}

}  // namespace
}  // namespace apps
}  // namespace pacer
