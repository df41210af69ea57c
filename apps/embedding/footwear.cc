// A training program of its own that embeds Pacer, built outside Pacer's tree (CMakeLists.txt:
// find_package; Makefile: pkg-config). Logistic regression tells footwear (sandals, sneakers, ankle
// boots) from the other Fashion-MNIST items (Debian's dataset-fashion-mnist), trained through
// pacer::GradientSync under BSP:
//
//   mpirun -np 6 footwear --servers 2 --out=w.txt       # 1 scheduler, 2 servers, 3 workers
//   footwear --reference --workers=3 --out=ref.txt      # the same training in one process
//
// Worker j's minibatch of iteration i is rows ((i * workers + j) * batch ...) of the training set,
// so the one-process run, which sums the workers' gradients itself, takes the same steps: the two
// weight files agree to float rounding. The program's own flags (--iterations, --batch, --lr,
// --reference, --workers, --out, --data) are taken out before Pacer reads the rest.
#include <pacer/gradient_sync.h>
#include <pacer/parameter_server.h>
#include <pacer/session.h>
#include <pacer/version.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kPixels = 28 * 28;

struct Options {
  int iterations = 100;
  int batch = 32;
  float lr = 0.5f;
  bool reference = false;
  int workers = 3;
  std::string out;
  std::string data = "/usr/share/datasets/fashion-mnist";
};

// Takes this program's flags out of argv; the others are Pacer's.
Options TakeOptions(int* argc, char** argv) {
  Options o;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* name) {
      const std::string prefix = std::string("--") + name + "=";
      return arg.rfind(prefix, 0) == 0 ? arg.substr(prefix.size()) : std::string();
    };
    if (!value("iterations").empty()) {
      o.iterations = std::stoi(value("iterations"));
    } else if (!value("batch").empty()) {
      o.batch = std::stoi(value("batch"));
    } else if (!value("lr").empty()) {
      o.lr = std::stof(value("lr"));
    } else if (!value("workers").empty()) {
      o.workers = std::stoi(value("workers"));
    } else if (!value("out").empty()) {
      o.out = value("out");
    } else if (!value("data").empty()) {
      o.data = value("data");
    } else if (arg == "--reference") {
      o.reference = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return o;
}

// The first `rows` images of an IDX file as features in [0, 1], and their labels as 1 (footwear)
// or 0. Only the rows the training reads are decompressed.
struct Data {
  std::vector<float> x;
  std::vector<float> y;
};

std::vector<unsigned char> ReadPrefix(const std::string& path, size_t bytes) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw std::runtime_error(path + ": cannot open");
  std::vector<unsigned char> data(bytes);
  const int got = gzread(file, data.data(), static_cast<unsigned>(bytes));
  gzclose(file);
  if (got != static_cast<int>(bytes)) {
    throw std::runtime_error(path + ": shorter than " + std::to_string(bytes) + " bytes");
  }
  return data;
}

Data Load(const std::string& dir, const std::string& split, size_t rows) {
  const auto images = ReadPrefix(dir + "/" + split + "-images-idx3-ubyte.gz", 16 + rows * kPixels);
  const auto labels = ReadPrefix(dir + "/" + split + "-labels-idx1-ubyte.gz", 8 + rows);
  Data d;
  d.x.resize(rows * kPixels);
  for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = images[16 + i] / 255.f;
  for (size_t i = 0; i < rows; ++i) {
    const int label = labels[8 + i];
    d.y.push_back(label == 5 || label == 7 || label == 9 ? 1.f : 0.f);
  }
  return d;
}

float Logit(const Data& d, size_t row, const std::vector<float>& w) {
  float z = w[kPixels];  // the bias
  for (int k = 0; k < kPixels; ++k) z += w[k] * d.x[row * kPixels + k];
  return z;
}

// The mean log-loss gradient over worker `worker`'s minibatch of iteration `iteration`.
void Gradient(const Data& d, const Options& o, int workers, int worker, int64_t iteration,
              const std::vector<float>& w, std::vector<float>& grad) {
  grad.assign(w.size(), 0.f);
  for (int s = 0; s < o.batch; ++s) {
    const size_t row = (static_cast<size_t>(iteration) * workers + worker) * o.batch + s;
    const float error = 1.f / (1.f + std::exp(-Logit(d, row, w))) - d.y[row];
    for (int k = 0; k < kPixels; ++k) grad[k] += error * d.x[row * kPixels + k] / o.batch;
    grad[kPixels] += error / o.batch;
  }
}

double Accuracy(const Data& d, const std::vector<float>& w) {
  int right = 0;
  for (size_t row = 0; row < d.y.size(); ++row) right += (Logit(d, row, w) > 0) == (d.y[row] > 0);
  return static_cast<double>(right) / d.y.size();
}

void Finish(const Options& o, const std::vector<float>& w, const char* how) {
  const Data test = Load(o.data, "t10k", 10000);
  std::printf("footwear (Pacer %s, %s): test accuracy %.4f after %d iterations\n", pacer::Version(),
              how, Accuracy(test, w), o.iterations);
  if (o.out.empty()) return;
  std::ofstream out(o.out);
  for (float v : w) out << std::hexfloat << v << "\n";
  if (!out) throw std::runtime_error(o.out + ": cannot write");
}

// BSP in one process: the servers' step, w -= lr x the mean of the workers' gradients.
void TrainAlone(const Options& o) {
  const Data train = Load(o.data, "train", size_t(o.iterations) * o.workers * o.batch);
  std::vector<float> w(kPixels + 1, 0.f), grad, sum;
  const float scale = static_cast<float>(1.0 / o.workers);
  for (int i = 0; i < o.iterations; ++i) {
    sum.assign(w.size(), 0.f);
    for (int j = 0; j < o.workers; ++j) {
      Gradient(train, o, o.workers, j, i, w, grad);
      for (size_t k = 0; k < w.size(); ++k) sum[k] += grad[k];
    }
    for (size_t k = 0; k < w.size(); ++k) w[k] -= o.lr * (sum[k] * scale);
  }
  Finish(o, w, "one process");
}

void TrainOnWorker(pacer::Session& session, const Options& o) {
  const int workers = session.num_workers(), me = session.role_index();
  const Data train = Load(o.data, "train", size_t(o.iterations) * workers * o.batch);
  std::vector<float> w(kPixels + 1, 0.f), grad;
  pacer::GradientSync sync(session);
  sync.Register("model", w.data(), w.size());
  for (int i = 0; i < o.iterations; ++i) {
    sync.BeginIteration(o.batch);
    Gradient(train, o, workers, me, sync.clock(), w, grad);
    sync.PushPull("model", grad.data(), w.data());
    sync.EndIteration();
  }
  if (me == 0) Finish(o, w, (std::to_string(workers) + " workers").c_str());
}

int Run(int argc, char** argv) {
  const Options o = TakeOptions(&argc, argv);
  if (o.reference) {
    TrainAlone(o);
    return 0;
  }
  pacer::Config config = pacer::Config::ParseCommandLine(&argc, &argv);
  config.sync = "bsp";
  char lr[32];
  std::snprintf(lr, sizeof(lr), "%.9g", o.lr);  // every digit a float has
  config.optimizer = std::string("sgd:lr=") + lr;
  pacer::Session session(config);
  if (session.is_server()) {
    pacer::ParameterServer server(session);
    session.Finalize();
  } else if (session.is_worker()) {
    TrainOnWorker(session, o);
    session.Finalize();
  } else {
    session.Finalize();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "footwear: %s\n", e.what());
    return 1;
  }
}
