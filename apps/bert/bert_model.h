#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "masked_batch.h"
#include "model_parameter.h"

namespace pacer {
namespace apps {

// A BERT encoder with its masked-language-model head, in libtorch behind this torch-free interface
// (each file that includes torch is slow to compile). The layers are BERT's: token,
// learned position and segment embeddings (one segment used; two kept so that BERT-base's shapes
// are exact), LayerNorm and dropout; `layers` post-LN transformer layers (multi-head self-attention
// that ignores [PAD] keys, a GELU feed-forward); then dense + GELU + LayerNorm and a decoder to the
// vocabulary whose weight is the token embedding's (tied, as BERT does) plus its own bias.
// BERT-base: layers 12, hidden 768, heads 12, intermediate 3072, vocab 30522, max_length 512.
struct BertOptions {
  int layers = 2;
  int hidden = 128;
  int heads = 4;
  int intermediate = 0;  // the feed-forward's width; 0: 4 x hidden
  int vocab = 8192;
  int max_length = 64;  // the longest sequence, [CLS] and [SEP] included
  double dropout = 0.1;
  int threads = 1;  // torch's intra-op threads
  unsigned seed = 0;
};

class Bert {
 public:
  // Throws std::invalid_argument for bad options, naming the flags (--hidden, --heads, ...).
  explicit Bert(const BertOptions& options);
  ~Bert();
  Bert(const Bert&) = delete;
  Bert& operator=(const Bert&) = delete;

  // The trainable tensors, in a fixed order, each once (the decoder's weight is the token
  // embedding).
  const std::vector<Parameter>& parameters() const { return parameters_; }
  int64_t parameter_count() const;

  void ZeroGrad();
  void ScaleGrad(float factor);

  // Over a batch's masked positions (labels != MaskedBatch::kIgnore).
  struct Score {
    double loss = 0;      // the mean cross-entropy
    double accuracy = 0;  // the fraction whose most likely token is the label
    int64_t predicted = 0;
  };
  // Adds the gradient of the mean cross-entropy over the batch's masked positions to the
  // gradients (nothing when it has none), in training mode. Dropout draws from `seed` alone, so the
  // same (parameters, batch, seed) give the same gradient, e.g. after resuming from a checkpoint.
  // Throws std::invalid_argument for sequences longer than max_length or ids outside the
  // vocabulary.
  Score Backward(const MaskedBatch& batch, uint64_t seed);
  // The same score in evaluation mode (no dropout), computing no gradient.
  Score Evaluate(const MaskedBatch& batch);

  // The module's whole state to a file and back into the same tensors (see torch_module.h).
  void Save(const std::string& path) const;
  void Load(const std::string& path);

 private:
  struct Net;
  Score Run(const MaskedBatch& batch, bool train);

  std::unique_ptr<Net> net_;
  std::vector<Parameter> parameters_;
};

}  // namespace apps
}  // namespace pacer
