// pacer-bert: a BERT encoder trained by masked-language modeling on the fortunes corpus (Debian's
// fortunes package) through GradientSync (issue 9).
//
//   mpirun -np 6 build/bin/pacer-bert --servers 1 --epochs=5
//   mpirun -np 7 build/bin/pacer-bert --servers 2 --synthetic --arch=base --compute-ms=300
//
// The corpus's entries, in file order, make one token stream (a word-level vocabulary of the
// --vocab most frequent words); sequence i is [CLS], --length - 2 tokens from i x (length - 2),
// [SEP], with 15% of its tokens masked: afresh each time it is trained on (RoBERTa's dynamic
// masking; by the computation's seed, so a moved task or a resumed job masks alike), and once for
// all by (--mask-seed, i) in the last 5%, held out: worker 0 reports masked-token accuracy there.
// Everything else (--sync, --policy,
// --scenario, --tasks, --checkpoint-dir, --synthetic, ...) is the shared loop's:
// apps/common/training_job.cc.
#include <gflags/gflags.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "app_roles.h"
#include "bert_model.h"
#include "masked_batch.h"
#include "text_corpus.h"
#include "tokenizer.h"
#include "training_job.h"

DEFINE_string(arch, "small", "small (--layers, --hidden, --heads by flag) or base (BERT-base)");
DEFINE_int32(layers, 2, "small: transformer layers");
DEFINE_int32(hidden, 128, "small: hidden size");
DEFINE_int32(heads, 4, "small: attention heads (divide --hidden)");
DEFINE_int32(vocab, 8192, "small: vocabulary size, the special tokens included");
DEFINE_int32(length, 64, "tokens per sequence, [CLS] and [SEP] included");
DEFINE_double(dropout, 0.1, "dropout of the embeddings, attention and feed-forward");
DEFINE_uint64(mask_seed, 1, "which tokens the held-out sequences mask");
DEFINE_int32(eval_sequences, 512, "held-out sequences worker 0 evaluates");
DEFINE_int32(threads, 1, "torch threads per worker");
DEFINE_string(data, pacer::apps::kFortunesDir, "the fortunes folder");

namespace pacer {
namespace apps {
namespace {

BertOptions Options() {
  BertOptions o;
  if (FLAGS_arch == "base") {
    o.layers = 12;
    o.hidden = 768;
    o.heads = 12;
    o.vocab = 30522;
    o.max_length = 512;
  } else if (FLAGS_arch == "small") {
    o.layers = FLAGS_layers;
    o.hidden = FLAGS_hidden;
    o.heads = FLAGS_heads;
    o.vocab = FLAGS_vocab;
    o.max_length = FLAGS_length;
  } else {
    throw std::invalid_argument("--arch=" + FLAGS_arch + ": expected small or base");
  }
  o.dropout = FLAGS_dropout;
  o.threads = FLAGS_threads;
  return o;
}

class BertWorkload : public Workload {
 public:
  BertWorkload(bool evaluator, bool synthetic) : options_(Options()), model_(options_) {
    if (synthetic) return;
    if (FLAGS_length > options_.max_length) {
      throw std::invalid_argument("--length=" + std::to_string(FLAGS_length) + " exceeds --arch=" +
                                  FLAGS_arch + "'s " + std::to_string(options_.max_length));
    }
    const std::vector<std::string> corpus = LoadFortunes(FLAGS_data);
    const Tokenizer tokenizer(corpus, options_.vocab);
    for (const std::string& entry : corpus) {
      const std::vector<int32_t> ids = tokenizer.Encode(entry);
      stream_.insert(stream_.end(), ids.begin(), ids.end());
    }
    const size_t sequences = stream_.size() / (FLAGS_length - 2);
    // Neighbouring sequences come from one fortune file (one topic): minibatches of consecutive
    // ones make a noisy descent, so training sample r is the r-th of a fixed shuffle.
    order_.resize(sequences - sequences / 20);
    std::iota(order_.begin(), order_.end(), int64_t{0});
    std::shuffle(order_.begin(), order_.end(), std::mt19937_64(FLAGS_mask_seed));
    const size_t train_sequences = order_.size();
    if (evaluator) {
      std::vector<int64_t> held_out;
      for (size_t i = train_sequences;
           i < sequences && held_out.size() < static_cast<size_t>(FLAGS_eval_sequences); ++i) {
        held_out.push_back(static_cast<int64_t>(i));
      }
      held_out_ = Mask(held_out, FLAGS_mask_seed);
    }
  }

  std::string name() const override {
    return FLAGS_arch == "base"
               ? "bert-base"
               : "bert-" + std::to_string(FLAGS_layers) + "x" + std::to_string(FLAGS_hidden);
  }
  const std::vector<Parameter>& parameters() const override { return model_.parameters(); }
  size_t train_size() const override { return order_.size(); }
  void ZeroGrad() override { model_.ZeroGrad(); }
  void ScaleGrad(float factor) override { model_.ScaleGrad(factor); }
  double Backward(const std::vector<size_t>& rows, uint64_t seed) override {
    std::vector<int64_t> ids;
    for (size_t r : rows) ids.push_back(order_.at(r));
    return model_.Backward(Mask(ids, seed), seed).loss;
  }
  double Evaluate() override { return model_.Evaluate(held_out_).accuracy; }
  void Save(const std::string& path) override { model_.Save(path); }
  void Load(const std::string& path) override { model_.Load(path); }

 private:
  MaskedBatch Mask(const std::vector<int64_t>& ids, uint64_t seed) const {
    return MaskSequences(stream_, ids, FLAGS_length, options_.vocab, Tokenizer::kCls,
                         Tokenizer::kSep, Tokenizer::kMask, Tokenizer::kSpecial, seed);
  }

  const BertOptions options_;
  Bert model_;
  std::vector<int32_t> stream_;
  std::vector<int64_t> order_;  // the training sequences, shuffled
  MaskedBatch held_out_;
};

int Run(int argc, char** argv) {
  TrainingApp app;
  app.program = "pacer-bert";
  app.unit = "tok";
  // Adam at 2e-3 and above stays on the unigram plateau (accuracy 0.063) without warm-up.
  app.defaults = {{"optimizer", "adam:lr=1e-3"}, {"epochs", "5"}, {"target_acc", "0.12"}};
  app.make = [](bool evaluator, bool synthetic) {
    return std::make_unique<BertWorkload>(evaluator, synthetic);
  };
  app.units_per_sample = [] { return static_cast<double>(FLAGS_length); };
  return RunTrainingApp(argc, argv, app);
}

}  // namespace
}  // namespace apps
}  // namespace pacer

int main(int argc, char** argv) {
  return pacer::bench::GuardedMain("pacer-bert", pacer::apps::Run, argc, argv);
}
