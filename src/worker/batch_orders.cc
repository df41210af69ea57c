#include "worker/batch_orders.h"

#include <cmath>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/node/node.h"

namespace pacer {

BatchOrders::BatchOrders(Node& node) : node_(node) {
  node.dispatcher().Take(proto::BATCH_ORDER, [this](Message&& msg) { OnOrder(std::move(msg)); });
}

BatchOrders::~BatchOrders() { node_.dispatcher().Take(proto::BATCH_ORDER, nullptr); }

void BatchOrders::Allow(const std::vector<int>& sizes) {
  if (sizes.empty()) throw Error("AllowBatchSizes: no batch size given");
  for (int size : sizes) {
    if (size <= 0) throw Error(StrCat("AllowBatchSizes: batch size ", size, " is not positive"));
  }
  Message msg;
  msg.meta.set_command(proto::BATCH_SIZES);
  msg.meta.set_sender(node_.rank());
  msg.meta.set_value_size(sizeof(int32_t));
  const Key key = 0;
  msg.keys = Buffer::Copy(&key, sizeof(Key));
  msg.vals.push_back(Buffer::Copy(sizes.data(), sizes.size() * sizeof(int32_t)));
  node_.cluster().SendOrLog(0, msg);  // the scheduler is rank 0
}

void BatchOrders::OnOrder(Message&& msg) {
  const int batch = msg.meta.batch_size();
  const double weight = msg.meta.weight();
  Message reply = ReplyTo(msg.meta, node_.rank());
  if (batch <= 0 || !(weight > 0) || !std::isfinite(weight)) {
    reply.meta.set_error(StrCat("worker rank ", node_.rank(), " ordered to run batches of ", batch,
                                " with weight ", weight, ": both must be positive"));
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    ordered_ = {batch, weight, msg.meta.skip_unchanged()};
  }
  node_.cluster().SendOrLog(msg.meta.sender(), reply);
}

void BatchOrders::Begin(int64_t, IterationPlan& plan) {
  std::lock_guard<std::mutex> lock(mu_);
  current_ = ordered_;
  plan.weight = current_.weight;
  plan.skip_unchanged = current_.skip_unchanged;
}

}  // namespace pacer
