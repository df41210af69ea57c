#include "ps/server/pending_response.h"

#include <glog/logging.h>

#include <algorithm>

#include "ps/session_core.h"

namespace pacer {
namespace detail {

PendingResponse::PendingResponse(const proto::Meta& request, SessionCore& session,
                                 size_t value_size, int parts)
    : request_(request), session_(session), value_size_(value_size), remaining_(parts) {}

size_t PendingResponse::Part::value_bytes() const {
  size_t total = 0;
  for (const Buffer& b : values) total += b.size();
  return total;
}

void PendingResponse::AddPart(int shard, Buffer keys, std::vector<Buffer> values, Buffer lens,
                              const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::find(answered_shards_.begin(), answered_shards_.end(), shard) !=
            answered_shards_.end() ||
        remaining_ == 0) {
      LOG(ERROR) << "server rank " << session_.rank() << ": a second response to "
                 << Describe(request_) << " from rank " << request_.sender() << " (ignored)";
      return;
    }
    answered_shards_.push_back(shard);
    if (!error.empty() && error_.empty()) error_ = error;
    if (error.empty())
      parts_.push_back({shard, std::move(keys), std::move(values), std::move(lens)});
    if (--remaining_ > 0) return;
  }
  Send();
}

void PendingResponse::Send() {
  if (!error_.empty()) {
    session_.RejectRequest(request_, error_);
    return;
  }
  Message reply;
  proto::Meta& meta = reply.meta;
  meta.set_command(request_.command());
  meta.set_is_response(true);
  meta.set_sender(session_.rank());
  meta.set_app_id(request_.app_id());
  meta.set_client_id(request_.client_id());
  meta.set_request_id(request_.request_id());
  meta.set_value_size(static_cast<int>(value_size_));
  if (parts_.size() == 1) {
    reply.keys = parts_[0].keys;
    reply.lens = parts_[0].lens;
    reply.vals = std::move(parts_[0].values);
  } else {
    // Keys of all parts back to back, with explicit lengths since parts may differ in them.
    std::vector<uint64_t> keys;
    std::vector<int32_t> lens;
    for (const Part& p : parts_) {
      const size_t n = p.keys.count<uint64_t>();
      keys.insert(keys.end(), p.keys.as<uint64_t>(), p.keys.as<uint64_t>() + n);
      if (!p.lens.empty()) {
        lens.insert(lens.end(), p.lens.as<int32_t>(), p.lens.as<int32_t>() + n);
      } else if (n > 0) {
        lens.insert(lens.end(), n, static_cast<int32_t>(p.value_bytes() / value_size_ / n));
      }
      reply.vals.insert(reply.vals.end(), p.values.begin(), p.values.end());
    }
    reply.keys = Buffer::FromVector(std::move(keys));
    if (reply.vals_bytes() > 0) reply.lens = Buffer::FromVector(std::move(lens));
  }
  try {
    session_.transport().Send(request_.sender(), reply, nullptr);
  } catch (const std::exception& e) {
    LOG(ERROR) << "server rank " << session_.rank() << ": " << e.what();
  }
}

}  // namespace detail
}  // namespace pacer
