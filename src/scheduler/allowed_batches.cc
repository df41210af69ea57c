#include "scheduler/allowed_batches.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

AllowedBatches::AllowedBatches(Node& node) : node_(node) {
  node.dispatcher().Take(proto::BATCH_SIZES, [this](Message&& msg) { OnSizes(std::move(msg)); });
}

AllowedBatches::~AllowedBatches() { node_.dispatcher().Take(proto::BATCH_SIZES, nullptr); }

void AllowedBatches::OnSizes(Message&& msg) {
  const Buffer values = msg.vals_buffer();
  const int sender = msg.meta.sender();
  if (node_.roles().RoleOf(sender) != Role::kWorker || values.size() % sizeof(int32_t) != 0) {
    LOG(WARNING) << "rank " << sender << " sent batch sizes of " << values.size()
                 << " bytes; only a worker's, 4 bytes each, count";
    return;
  }
  std::vector<int> sizes(values.size() / sizeof(int32_t));
  for (size_t i = 0; i < sizes.size(); ++i) sizes[i] = values.as<int32_t>()[i];
  std::lock_guard<std::mutex> lock(mu_);
  sizes_[node_.roles().IndexOf(sender)] = std::move(sizes);
}

std::vector<int> AllowedBatches::Of(int index) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = sizes_.find(index);
  return it == sizes_.end() ? std::vector<int>() : it->second;
}

std::vector<int> AllowedBatches::Common() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (int w = 0; w < node_.roles().num_workers(); ++w) {
    if (sizes_.count(w) == 0) {
      throw Error(StrCat("worker ", w, " has not told its batch sizes (AllowBatchSizes)"));
    }
  }
  std::vector<int> common;
  for (int size : sizes_.at(0)) {
    bool everywhere = true;
    for (const auto& [w, sizes] : sizes_) {
      everywhere &= std::find(sizes.begin(), sizes.end(), size) != sizes.end();
    }
    if (everywhere) common.push_back(size);
  }
  return common;
}

}  // namespace pacer
