#include "server/sent_parameters.h"

#include <limits>

namespace pacer {

namespace {

// ||now - sent||^2 <= eps^2 x ||sent||^2, in doubles.
bool Within(const Buffer& now, const Buffer& sent, double eps) {
  if (now.size() != sent.size()) return false;
  const float* a = now.as<float>();
  const float* b = sent.as<float>();
  double moved = 0, norm = 0;
  for (size_t i = 0; i < now.count<float>(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    moved += d * d;
    norm += static_cast<double>(b[i]) * b[i];
  }
  return moved <= eps * eps * norm;
}

}  // namespace

bool SentParameters::Unchanged(int worker, Key key, int64_t held_version, const Buffer& now,
                               int64_t version, double eps) {
  Sent& sent = sent_[{key, worker}];
  if (!sent.values.empty() && sent.version == held_version && Within(now, sent.values, eps)) {
    return true;
  }
  sent.version = version;
  sent.values = Buffer::Copy(now.data(), now.size());
  return false;
}

void SentParameters::Forget(int worker, Key key) { sent_.erase({key, worker}); }

void SentParameters::ForgetKey(Key key) {
  sent_.erase(sent_.lower_bound({key, std::numeric_limits<int>::min()}),
              sent_.upper_bound({key, std::numeric_limits<int>::max()}));
}

int64_t SentParameters::BytesOf(Key key) const {
  int64_t bytes = 0;
  for (auto it = sent_.lower_bound({key, std::numeric_limits<int>::min()});
       it != sent_.end() && it->first.first == key; ++it) {
    bytes += static_cast<int64_t>(it->second.values.size());
  }
  return bytes;
}

}  // namespace pacer
