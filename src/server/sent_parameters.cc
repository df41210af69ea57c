#include "server/sent_parameters.h"

#include <limits>

#include "common/relative_distance.h"

namespace pacer {

bool SentParameters::Unchanged(int worker, Key key, int64_t held_version, const Buffer& now,
                               int64_t version, double eps) {
  Sent& sent = sent_[{key, worker}];
  if (!sent.values.empty() && sent.version == held_version && now.size() == sent.values.size() &&
      WithinRelative(now.as<float>(), sent.values.as<float>(), now.count<float>(), eps)) {
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
