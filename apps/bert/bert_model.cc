#include "bert_model.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "tokenizer.h"
#include "torch_module.h"

namespace pacer {
namespace apps {
namespace {

namespace nn = torch::nn;

constexpr double kLayerNormEps = 1e-12;  // BERT's

nn::LayerNorm Norm(int hidden) {
  return nn::LayerNorm(nn::LayerNormOptions({hidden}).eps(kLayerNormEps));
}

struct EmbeddingsImpl : nn::Module {
  explicit EmbeddingsImpl(const BertOptions& o)
      : word(register_module("word", nn::Embedding(o.vocab, o.hidden))),
        position(register_module("position", nn::Embedding(o.max_length, o.hidden))),
        segment(register_module("segment", nn::Embedding(2, o.hidden))),
        norm(register_module("norm", Norm(o.hidden))),
        dropout(register_module("dropout", nn::Dropout(o.dropout))) {}
  // ids: sequences x length. Every token is in segment 0 (one text per sequence, no sentence
  // pairs): its row is added directly rather than looked up.
  torch::Tensor forward(const torch::Tensor& ids) {
    const torch::Tensor e =
        word(ids) + position->weight.slice(0, 0, ids.size(1)) + segment->weight[0];
    return dropout(norm(e));
  }
  nn::Embedding word, position, segment;
  nn::LayerNorm norm;
  nn::Dropout dropout;
};
TORCH_MODULE(Embeddings);

// A post-LN encoder layer, attention written out: torch::nn::MultiheadAttention wants
// sequence-first tensors and initializes itself its own way, and by hand is as short.
struct LayerImpl : nn::Module {
  LayerImpl(const BertOptions& o, int intermediate)
      : heads(o.heads),
        qkv(register_module("qkv", nn::Linear(o.hidden, 3 * o.hidden))),  // one product, not 3
        attention_output(register_module("attention_output", nn::Linear(o.hidden, o.hidden))),
        attention_norm(register_module("attention_norm", Norm(o.hidden))),
        feed_forward_in(register_module("feed_forward_in", nn::Linear(o.hidden, intermediate))),
        feed_forward_out(register_module("feed_forward_out", nn::Linear(intermediate, o.hidden))),
        output_norm(register_module("output_norm", Norm(o.hidden))),
        dropout(register_module("dropout", nn::Dropout(o.dropout))) {}
  // x: sequences x length x hidden; mask: undefined, or sequences x 1 x 1 x length, added to the
  // attention scores (a large negative number at [PAD] keys).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    const int64_t n = x.size(0), length = x.size(1), hidden = x.size(2);
    // Each n x heads x length x head size.
    const std::vector<torch::Tensor> qkv_heads =
        qkv(x).view({n, length, 3, heads, hidden / heads}).permute({2, 0, 3, 1, 4}).unbind(0);
    torch::Tensor scores = torch::matmul(qkv_heads[0], qkv_heads[1].transpose(-2, -1)) /
                           std::sqrt(static_cast<double>(hidden / heads));
    if (mask.defined()) scores = scores + mask;
    const torch::Tensor context = torch::matmul(dropout(torch::softmax(scores, -1)), qkv_heads[2])
                                      .transpose(1, 2)
                                      .reshape({n, length, hidden});
    const torch::Tensor a = attention_norm(x + dropout(attention_output(context)));
    return output_norm(a + dropout(feed_forward_out(torch::gelu(feed_forward_in(a)))));
  }
  int64_t heads;
  nn::Linear qkv, attention_output;
  nn::LayerNorm attention_norm;
  nn::Linear feed_forward_in, feed_forward_out;
  nn::LayerNorm output_norm;
  nn::Dropout dropout;
};
TORCH_MODULE(Layer);

// The masked-LM head: dense + GELU + LayerNorm, then the decoder to the vocabulary, whose weight is
// the token embedding's (passed in, so that parameters() lists it once) and whose bias is its own.
struct HeadImpl : nn::Module {
  explicit HeadImpl(const BertOptions& o)
      : dense(register_module("dense", nn::Linear(o.hidden, o.hidden))),
        norm(register_module("norm", Norm(o.hidden))),
        decoder_bias(register_parameter("decoder_bias", torch::zeros({o.vocab}))) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& word_embedding) {
    return nn::functional::linear(norm(torch::gelu(dense(x))), word_embedding, decoder_bias);
  }
  nn::Linear dense;
  nn::LayerNorm norm;
  torch::Tensor decoder_bias;
};
TORCH_MODULE(Head);

void Check(bool ok, const std::string& why) {
  if (!ok) throw std::invalid_argument(why);
}

std::string Flag(const char* name, double value) {
  std::ostringstream s;
  s << "--" << name << "=" << value;
  return s.str();
}

void Validate(const BertOptions& o) {
  Check(o.layers >= 1, Flag("layers", o.layers) + ": expected at least 1 layer");
  Check(o.hidden >= 1 && o.heads >= 1 && o.hidden % o.heads == 0,
        Flag("hidden", o.hidden) + " must be a positive multiple of " + Flag("heads", o.heads));
  Check(o.intermediate >= 0, Flag("intermediate", o.intermediate) + ": expected >= 0 (0: 4 x " +
                                 Flag("hidden", o.hidden) + ")");
  Check(o.vocab > Tokenizer::kSpecial, Flag("vocab", o.vocab) + ": expected more than the " +
                                           std::to_string(Tokenizer::kSpecial) + " special tokens");
  Check(o.max_length >= 3, Flag("max-length", o.max_length) +
                               ": expected room for [CLS], a token and [SEP] (at least 3)");
  Check(o.dropout >= 0 && o.dropout < 1, Flag("dropout", o.dropout) + ": expected [0, 1)");
  Check(o.threads >= 1, Flag("threads", o.threads) + ": expected at least 1");
}

}  // namespace

struct Bert::Net : nn::Module {
  explicit Net(const BertOptions& o)
      : vocab(o.vocab),
        max_length(o.max_length),
        embeddings(register_module("embeddings", Embeddings(o))),
        layers(register_module("layers", nn::ModuleList())),
        head(register_module("head", Head(o))) {
    for (int i = 0; i < o.layers; ++i) {
      layers->push_back(Layer(o, o.intermediate > 0 ? o.intermediate : 4 * o.hidden));
    }
    // BERT's initialization: weights N(0, 0.02), biases 0, LayerNorm scale 1 and shift 0.
    torch::NoGradGuard no_grad;
    for (auto& item : named_parameters()) {
      const std::string& name = item.key();
      if (name.find("norm.") != std::string::npos) continue;  // torch's LayerNorm starts so
      const bool weight = name.size() >= 6 && name.compare(name.size() - 6, 6, "weight") == 0;
      weight ? item.value().normal_(0, 0.02) : item.value().zero_();
    }
  }

  // The logits of the positions `masked` (indexes into sequences x length) of `ids`.
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& masked) {
    // pacer-bert's sequences are all full (no [PAD]): no mask then, and no cost.
    torch::Tensor mask;
    const torch::Tensor pad = ids.eq(Tokenizer::kPad);
    if (pad.any().item<bool>()) {
      mask = pad.to(torch::kFloat).mul(-10000.0).view({ids.size(0), 1, 1, ids.size(1)});
    }
    torch::Tensor x = embeddings(ids);
    for (const auto& layer : *layers) x = layer->as<Layer>()->forward(x, mask);
    // The head runs on the masked positions only (about 15%): its decoder to the vocabulary is the
    // largest product of a small model.
    return head(x.reshape({-1, x.size(2)}).index_select(0, masked), embeddings->word->weight);
  }

  int vocab, max_length;
  Embeddings embeddings;
  nn::ModuleList layers;
  Head head;
};

Bert::Bert(const BertOptions& options) {
  Validate(options);
  torch::set_num_threads(options.threads);
  torch::manual_seed(options.seed);
  net_ = std::make_unique<Net>(options);
  parameters_ = ExposeParameters(*net_);
}

Bert::~Bert() = default;

int64_t Bert::parameter_count() const {
  int64_t n = 0;
  for (const Parameter& p : parameters_) n += static_cast<int64_t>(p.count);
  return n;
}

void Bert::ZeroGrad() { apps::ZeroGrad(*net_); }
void Bert::ScaleGrad(float factor) { apps::ScaleGrad(*net_, factor); }

Bert::Score Bert::Run(const MaskedBatch& batch, bool train) {
  const size_t size = static_cast<size_t>(batch.sequences) * static_cast<size_t>(batch.length);
  Check(batch.sequences >= 0 && batch.length >= 1 && batch.input.size() == size &&
            batch.labels.size() == size,
        "a masked batch of " + std::to_string(batch.sequences) + " x " +
            std::to_string(batch.length) + " tokens holds " + std::to_string(batch.input.size()) +
            " ids and " + std::to_string(batch.labels.size()) + " labels");
  Check(batch.length <= net_->max_length, "sequences of " + std::to_string(batch.length) +
                                              " tokens exceed " +
                                              Flag("max-length", net_->max_length));
  std::vector<int64_t> masked, targets;
  for (size_t i = 0; i < size; ++i) {
    Check(batch.input[i] >= 0 && batch.input[i] < net_->vocab,
          "token id " + std::to_string(batch.input[i]) + " outside " + Flag("vocab", net_->vocab));
    if (batch.labels[i] == MaskedBatch::kIgnore) continue;
    Check(batch.labels[i] >= 0 && batch.labels[i] < net_->vocab,
          "label " + std::to_string(batch.labels[i]) + " outside " + Flag("vocab", net_->vocab));
    masked.push_back(static_cast<int64_t>(i));
    targets.push_back(batch.labels[i]);
  }
  Score score;
  score.predicted = static_cast<int64_t>(masked.size());
  if (masked.empty()) return score;

  net_->train(train);
  const torch::Tensor ids = torch::from_blob(const_cast<int32_t*>(batch.input.data()),
                                             {batch.sequences, batch.length}, torch::kInt32)
                                .to(torch::kLong);
  const torch::Tensor y = torch::tensor(targets, torch::kLong);
  const torch::Tensor logits = net_->forward(ids, torch::tensor(masked, torch::kLong));
  const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
  if (train) loss.backward();
  score.loss = loss.item<double>();
  score.accuracy = logits.argmax(1).eq(y).sum().item<double>() / score.predicted;
  return score;
}

Bert::Score Bert::Backward(const MaskedBatch& batch, uint64_t seed) {
  torch::manual_seed(seed);
  return Run(batch, /*train=*/true);
}

Bert::Score Bert::Evaluate(const MaskedBatch& batch) {
  torch::NoGradGuard no_grad;
  return Run(batch, /*train=*/false);
}

void Bert::Save(const std::string& path) const { SaveModuleState(*net_, path); }
void Bert::Load(const std::string& path) { LoadModuleState(*net_, path); }

}  // namespace apps
}  // namespace pacer
