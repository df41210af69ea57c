#pragma once

#include <cstdint>
#include <vector>

namespace pacer {
namespace apps {

// Masked-language-model inputs (BERT's pre-training task) cut from a token stream.
struct MaskedBatch {
  static constexpr int32_t kIgnore = -100;  // a label of a position not predicted
  int sequences = 0, length = 0;
  std::vector<int32_t> input;   // sequences x length token ids
  std::vector<int32_t> labels;  // the original id where a token was chosen, else kIgnore
};

// Sequence `id` is [CLS], the stream's tokens from id x (length - 2) (wrapping around), [SEP].
// Each other position is chosen with probability 0.15 (at least one per sequence): it becomes
// [MASK] 80% of the time, a random token 10%, itself 10%, and its label is the original token.
// The choices depend on (seed, id) only, so every worker cuts the same sequence the same way.
// `mask_id` and `first_word` (the lowest id a random token may take) come from the tokenizer.
MaskedBatch MaskSequences(const std::vector<int32_t>& stream, const std::vector<int64_t>& ids,
                          int length, int vocab_size, int32_t cls_id, int32_t sep_id,
                          int32_t mask_id, int32_t first_word, uint64_t seed);

}  // namespace apps
}  // namespace pacer
