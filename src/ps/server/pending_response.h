#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "pacer/buffer.h"
#include "ps/message.h"

namespace pacer {

class SessionCore;

namespace detail {

// The reply to one request that was split over several request threads: it collects one part per
// thread and sends a single response (or the first error) when the last part is in.
class PendingResponse {
 public:
  PendingResponse(const proto::Meta& request, SessionCore& session, size_t value_size, int parts);

  // Records the part handled by `shard`; a second answer for the same shard is logged and ignored.
  void AddPart(int shard, Buffer keys, std::vector<Buffer> values, Buffer lens,
               const std::string& error);

 private:
  struct Part {
    int shard;
    Buffer keys;
    std::vector<Buffer> values;
    Buffer lens;
    size_t value_bytes() const;
  };
  void Send();

  const proto::Meta request_;
  SessionCore& session_;
  const size_t value_size_;
  std::mutex mu_;
  int remaining_;
  std::vector<Part> parts_;
  std::vector<int> answered_shards_;
  std::string error_;
};

}  // namespace detail
}  // namespace pacer
