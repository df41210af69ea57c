#include "fashion_mnist.h"

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace pacer {
namespace examples {
namespace {

std::vector<uint8_t> ReadGzip(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) {
    throw std::runtime_error(path + ": cannot open (install the dataset-fashion-mnist package)");
  }
  std::vector<uint8_t> data;
  uint8_t chunk[1 << 16];
  int n;
  while ((n = gzread(file.get(), chunk, sizeof(chunk))) > 0)
    data.insert(data.end(), chunk, chunk + n);
  if (n < 0) throw std::runtime_error(path + ": not a readable gzip file");
  return data;
}

uint32_t BigEndian(const std::vector<uint8_t>& d, size_t at) {
  return uint32_t{d[at]} << 24 | uint32_t{d[at + 1]} << 16 | uint32_t{d[at + 2]} << 8 | d[at + 3];
}

}  // namespace

Dataset LoadFashionMnist(const std::string& dir, const std::string& split) {
  const std::string images_path = dir + "/" + split + "-images-idx3-ubyte.gz";
  const std::string labels_path = dir + "/" + split + "-labels-idx1-ubyte.gz";
  const std::vector<uint8_t> images = ReadGzip(images_path), labels = ReadGzip(labels_path);
  if (images.size() < 16 || BigEndian(images, 0) != 0x803) {
    throw std::runtime_error(images_path + ": not an IDX image file");
  }
  if (labels.size() < 8 || BigEndian(labels, 0) != 0x801) {
    throw std::runtime_error(labels_path + ": not an IDX label file");
  }
  const size_t count = BigEndian(images, 4), rows = BigEndian(images, 8),
               cols = BigEndian(images, 12);
  if (BigEndian(labels, 4) != count || images.size() != 16 + count * rows * cols ||
      labels.size() != 8 + count) {
    throw std::runtime_error(images_path + ": sizes do not match its labels");
  }
  Dataset d;
  d.features = static_cast<int>(rows * cols);
  d.classes = 10;
  d.x.resize(count * rows * cols);
  for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = images[16 + i] / 255.f;
  d.y.resize(count);
  for (size_t i = 0; i < count; ++i) {
    d.y[i] = labels[8 + i];
    if (d.y[i] >= d.classes) throw std::runtime_error(labels_path + ": a label above 9");
  }
  return d;
}

}  // namespace examples
}  // namespace pacer
