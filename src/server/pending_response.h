#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "pacer/buffer.h"
#include "pacer/detail/sharded_server.h"
#include "ps/messages/message.h"

namespace pacer {

class Node;

namespace detail {

// The reply to one request that was split over several request threads: it collects the parts'
// answers and sends a single response (or the first error) when the last part is in, with its
// keys in the request's order (so a worker can receive the values straight into place).
class PendingResponse {
 public:
  PendingResponse(const proto::Meta& request, Node& node, size_t value_size, int parts);

  // Records the answer of part `part`; a second answer for the same part is logged and ignored.
  void AddPart(int part, Buffer keys, std::vector<Buffer> values, Buffer lens,
               const std::string& error, const ResponseStamp& stamp = {});
  // Records that part `part` was not served here: the whole request is redirected.
  void AddRedirect(int part);

 private:
  struct Part {
    Buffer keys;
    std::vector<Buffer> values;
    Buffer lens;
    size_t value_bytes() const;
  };
  void Send();
  // Marks `part` answered; false (logged) if it does not exist or was answered before.
  bool Accept(int part);
  // Merges the parts' answers into `reply`, ordered by key.
  void Merge(Message* reply) const;

  const proto::Meta request_;
  Node& node_;
  const size_t value_size_;
  std::mutex mu_;
  int remaining_;
  std::vector<Part> parts_;
  std::vector<bool> answered_;
  std::string error_;
  bool redirect_ = false;
  ResponseStamp stamp_;
};

}  // namespace detail
}  // namespace pacer
