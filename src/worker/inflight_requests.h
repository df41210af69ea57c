#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/buffer_pool.h"
#include "common/spin_policy.h"
#include "pacer/detail/routed_client.h"
#include "ps/messages/message.h"
#include "ps/node/node.h"
#include "worker/pull_assembly.h"
#include "worker/request_tracker.h"

namespace pacer {
namespace detail {

// "push", "pull" or "push-pull", for errors.
const char* OperationName(Operation op);

// A RoutedClient's requests in flight: each cut into one message per owning server (and by
// size), sent, redirected where a server no longer owns a key, assembled as the answers come, and
// completed once every part is.
struct RoutedClient::InflightRequests
    : std::enable_shared_from_this<RoutedClient::InflightRequests> {
  // One server's share of a request, as sent.
  struct Part {
    Operation op;
    std::vector<size_t> positions;  // indices into the request's keys
  };
  struct Pending {
    Request request;                     // keys and values, kept to resend redirected parts
    std::vector<size_t> offsets;         // byte offset of each key's values; see OffsetsOf
    std::vector<Part> parts;             // indexed by the part number the messages carry
    std::unique_ptr<PullAssembly> pull;  // pulls and push-pulls
    std::shared_ptr<ResponseStamp> answer;
  };

  InflightRequests(Node& n, int app, size_t vsize)
      : node(n),
        app_id(app),
        value_size(vsize),
        spin(std::chrono::microseconds(std::max(0, n.config().tuning.spin_us))),
        max_message_bytes(n.config().tuning.max_message_bytes),
        tracker(n.rank()) {}

  void PartDone(int ts, const std::string& error) {
    if (tracker.PartDone(ts, error)) Complete(ts);
  }
  void OnResponse(Message&& msg);
  // Resends the keys of a part that a server no longer owns, as the table it sent says.
  void Redirect(int ts, const Message& msg);
  // One message per owning server, by the routing table now, for the keys at `positions` (all
  // keys when null); each is recorded as a part of `p`.
  using Cut = std::vector<std::pair<int, Message>>;
  Cut CutParts(int ts, Pending& p, Operation op, const std::vector<size_t>* positions);
  // The keys at `slice` (one server's) in groups of at most max_message_bytes of values each,
  // whole keys, in order; one group where the sizes are not known.
  std::vector<std::vector<size_t>> SplitBySize(Pending& p, bool push, std::vector<size_t> slice);
  // The message that carries the keys at `slice` of `p`'s request.
  Message MessageOf(int ts, Pending& p, Operation op, bool pull_after_push, int64_t epoch,
                    const std::vector<size_t>& slice);
  // Adds the messages to the request's tracker and sends them. Called with `mu` not held (a send
  // may complete at once).
  void SendParts(int ts, Cut messages);
  // The byte offset of each key's values in a push, computed when a push is first cut over
  // several servers.
  const std::vector<size_t>& OffsetsOf(Pending& p);
  uint8_t* Place(const DecodedHeader& header);
  void Complete(int ts);
  std::string Prefix() const { return "rank " + std::to_string(node.rank()) + ": "; }

  Node& node;
  const int app_id;
  const size_t value_size;
  SpinPolicy spin;  // for Wait
  const int64_t max_message_bytes;
  int client_id = -1;
  RequestTracker tracker;
  BufferPool pool;
  std::mutex mu;
  std::map<int, std::shared_ptr<Pending>> pending;
  KnownLengths known_lens;              // value counts seen in pulls, for placing the next ones
  std::shared_ptr<void> failure_watch;  // fails every request when the job loses a rank
};

}  // namespace detail
}  // namespace pacer
