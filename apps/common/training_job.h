#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model_parameter.h"

namespace pacer {
namespace apps {

// What the apps' training loop needs from a model and its data set; the loop itself, its flags,
// tasks, evaluation, checkpoints, progress and summary are shared (RunTrainingApp).
class Workload {
 public:
  virtual ~Workload() = default;
  // The summary's name of the model ("resnet8", "bert-2x128").
  virtual std::string name() const = 0;
  virtual const std::vector<Parameter>& parameters() const = 0;
  // Training samples (images, sequences) in an epoch.
  virtual size_t train_size() const = 0;
  virtual void ZeroGrad() = 0;
  virtual void ScaleGrad(float factor) = 0;
  // Adds the gradient of the mean loss over training samples `rows` and returns that loss. `seed`
  // draws the computation's randomness (dropout), so a resumed job computes what it would have.
  virtual double Backward(const std::vector<size_t>& rows, uint64_t seed) = 0;
  // For SMS's batch shrink (SelectSamples): per training sample of `rows`, `*dim` cheap features
  // and a loss. False: the model offers none, and a shrunk batch drops samples at random.
  virtual bool Describe(const std::vector<size_t>& /*rows*/, std::vector<float>* /*features*/,
                        int* /*dim*/, std::vector<float>* /*losses*/) {
    return false;
  }
  // The held-out metric the target refers to (accuracy); only on the evaluating worker.
  virtual double Evaluate() = 0;
  // The model's local state (parameters, and statistics such as batch norm's) to a file and back.
  virtual void Save(const std::string& path) = 0;
  virtual void Load(const std::string& path) = 0;
};

struct TrainingApp {
  const char* program;  // for errors: "pacer-resnet"
  std::string unit;     // what throughput counts: "img", "tok"
  // This app's defaults for shared flags, as {flag, value}: the optimizer, epochs and the like.
  std::vector<std::pair<std::string, std::string>> defaults;
  // The model and, unless `synthetic` (--synthetic: shapes only), its data; the evaluating
  // worker's loads the held-out set. Called after the flags are parsed.
  std::function<std::unique_ptr<Workload>(bool evaluator, bool synthetic)> make;
  // Throughput units per sample (tokens per sequence); called after the flags are parsed.
  std::function<double()> units_per_sample = [] { return 1.0; };
};

// An app's whole run on every rank of an MPI job: parses the flags (the app's, the shared ones
// of training_job.cc and the session's), starts MPI and the session, runs the servers and the
// scheduler, and trains on the workers. Returns the exit status: 1 when worker 0's final
// accuracy is below --min-acc.
int RunTrainingApp(int argc, char** argv, const TrainingApp& app);

}  // namespace apps
}  // namespace pacer
