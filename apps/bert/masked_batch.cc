#include "masked_batch.h"

#include <random>
#include <stdexcept>
#include <string>

namespace pacer {
namespace apps {

MaskedBatch MaskSequences(const std::vector<int32_t>& stream, const std::vector<int64_t>& ids,
                          int length, int vocab_size, int32_t cls_id, int32_t sep_id,
                          int32_t mask_id, int32_t first_word, uint64_t seed) {
  if (length < 3 || stream.empty() || first_word >= vocab_size) {
    throw std::invalid_argument("cannot cut sequences of " + std::to_string(length) +
                                " tokens from a stream of " + std::to_string(stream.size()) +
                                " over a vocabulary of " + std::to_string(vocab_size));
  }
  MaskedBatch b;
  b.sequences = static_cast<int>(ids.size());
  b.length = length;
  b.input.reserve(ids.size() * length);
  b.labels.assign(ids.size() * length, MaskedBatch::kIgnore);
  const size_t body = static_cast<size_t>(length) - 2;
  for (size_t s = 0; s < ids.size(); ++s) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(ids[s]));
    std::uniform_real_distribution<double> uniform(0, 1);
    std::uniform_int_distribution<int32_t> word(first_word, vocab_size - 1);
    const size_t first = static_cast<size_t>(ids[s]) * body;
    b.input.push_back(cls_id);
    for (size_t i = 0; i < body; ++i) b.input.push_back(stream[(first + i) % stream.size()]);
    b.input.push_back(sep_id);
    int32_t* in = b.input.data() + s * length;
    int32_t* label = b.labels.data() + s * length;
    bool any = false;
    for (int p = 1; p <= static_cast<int>(body); ++p) {
      // The last position is chosen when no other was, so every sequence teaches something.
      if (!(uniform(rng) < 0.15 || (p == static_cast<int>(body) && !any))) continue;
      any = true;
      label[p] = in[p];
      const double r = uniform(rng);
      if (r < 0.8) {
        in[p] = mask_id;
      } else if (r < 0.9) {
        in[p] = word(rng);
      }
    }
  }
  return b;
}

}  // namespace apps
}  // namespace pacer
