#include "server/pending_response.h"

#include <glog/logging.h>

#include <algorithm>

#include "ps/node/node.h"

namespace pacer {
namespace detail {

PendingResponse::PendingResponse(const proto::Meta& request, Node& node, size_t value_size,
                                 int parts)
    : request_(request),
      node_(node),
      value_size_(value_size),
      remaining_(parts),
      parts_(parts),
      answered_(parts, false) {}

size_t PendingResponse::Part::value_bytes() const {
  size_t total = 0;
  for (const Buffer& b : values) total += b.size();
  return total;
}

bool PendingResponse::Accept(int part) {
  if (part < 0 || part >= static_cast<int>(answered_.size()) || answered_[part]) {
    LOG(ERROR) << "server rank " << node_.rank() << ": a second response to part " << part << " of "
               << Describe(request_) << " from rank " << request_.sender() << " (ignored)";
    return false;
  }
  answered_[part] = true;
  return true;
}

void PendingResponse::AddPart(int part, Buffer keys, std::vector<Buffer> values, Buffer lens,
                              const std::string& error, const ResponseStamp& stamp) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!Accept(part)) return;
    if (!error.empty() && error_.empty()) error_ = error;
    parts_[part] = {std::move(keys), std::move(values), std::move(lens)};
    stamp_.Merge(stamp);
    if (--remaining_ > 0) return;
  }
  Send();
}

void PendingResponse::AddRedirect(int part) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!Accept(part)) return;
    redirect_ = true;
    if (--remaining_ > 0) return;
  }
  Send();
}

namespace {

// Walks a gather list, handing out consecutive byte ranges as views.
class GatherCursor {
 public:
  explicit GatherCursor(const std::vector<Buffer>& fragments) : fragments_(fragments) {}
  // Appends views of the next `bytes` bytes to `out`.
  void Take(size_t bytes, std::vector<Buffer>* out) {
    while (bytes > 0 && index_ < fragments_.size()) {
      const Buffer& f = fragments_[index_];
      size_t n = std::min(bytes, f.size() - offset_);
      out->push_back(f.Slice(offset_, n));
      bytes -= n;
      offset_ += n;
      if (offset_ == f.size()) {
        ++index_;
        offset_ = 0;
      }
    }
  }

 private:
  const std::vector<Buffer>& fragments_;
  size_t index_ = 0;
  size_t offset_ = 0;
};

}  // namespace

void PendingResponse::Merge(Message* reply) const {
  struct Entry {
    uint64_t key;
    int32_t len;
    std::vector<Buffer> values;  // views of its values in the part's answer
  };
  std::vector<Entry> entries;
  for (const Part& part : parts_) {
    const size_t n = part.keys.count<uint64_t>();
    const int32_t* lens = part.lens.as<int32_t>();
    const size_t uniform = n == 0 ? 0 : part.value_bytes() / value_size_ / n;
    GatherCursor cursor(part.values);
    for (size_t i = 0; i < n; ++i) {
      Entry e{part.keys.as<uint64_t>()[i], lens ? lens[i] : static_cast<int32_t>(uniform), {}};
      cursor.Take(static_cast<size_t>(e.len) * value_size_, &e.values);
      entries.push_back(std::move(e));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.key < b.key; });
  std::vector<uint64_t> keys;
  std::vector<int32_t> lens;
  for (const Entry& e : entries) {
    keys.push_back(e.key);
    lens.push_back(e.len);
    for (const Buffer& v : e.values) reply->vals.push_back(v);
  }
  reply->keys = Buffer::FromVector(std::move(keys));
  if (reply->vals_bytes() > 0) reply->lens = Buffer::FromVector(std::move(lens));
}

void PendingResponse::Send() {
  if (!error_.empty()) {
    node_.cluster().Reject(request_, error_);
    return;
  }
  if (redirect_) {
    // Only waiting pulls are redirected, after their push (if any) was applied.
    node_.routing().Redirect(request_, request_.command() == proto::PUSH_PULL);
    return;
  }
  Message reply = ReplyTo(request_, node_.rank());
  proto::Meta& meta = reply.meta;
  meta.set_value_size(static_cast<int>(value_size_));
  meta.set_version(stamp_.version);
  meta.set_complete_clock(stamp_.complete_clock);
  meta.set_clock(stamp_.clock);
  meta.set_unchanged_keys(static_cast<int32_t>(stamp_.unchanged_keys));
  if (parts_.size() == 1) {
    reply.keys = parts_[0].keys;
    reply.lens = parts_[0].lens;
    reply.vals = std::move(parts_[0].values);
  } else {
    Merge(&reply);
  }
  try {
    node_.transport().Send(request_.sender(), reply, nullptr);
  } catch (const std::exception& e) {
    LOG(ERROR) << "server rank " << node_.rank() << ": " << e.what();
  }
}

}  // namespace detail
}  // namespace pacer
