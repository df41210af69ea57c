#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ps/cluster/cluster.h"
#include "ps/cluster/dispatcher.h"

namespace pacer {

// One side of a request-and-answers exchange with other nodes (the scheduler's mode switches and
// migrations, a worker's task requests): a client that numbers each exchange, collects the
// answers of the current one and drops late answers of earlier ones. One exchange at a time.
class ControlChannel {
 public:
  // Waits for answers at most `timeout_s`, and not once `cluster`'s job failed.
  ControlChannel(Cluster& cluster, Dispatcher& dispatcher, double timeout_s);
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  // Starts an exchange that waits for `answers` answers; returns the request id to send with.
  int64_t Begin(int answers);
  // A request of `command` from rank `sender` for `app_id`, of exchange `request_id` (Begin's),
  // whose answers come back to this channel.
  Message Request(proto::Command command, int sender, int app_id, int64_t request_id) const;
  // The answers' metas once all came. Throws TimeoutError naming `what` after the session's
  // timeout_s, Error once Cancel was called, and LostRankError once the job failed.
  std::vector<proto::Meta> Wait(const std::string& what);
  // Ends the wait of this exchange and of every later one (a job ending).
  void Cancel();

 private:
  struct Exchange;
  std::shared_ptr<Exchange> exchange_;
  std::shared_ptr<void> failure_watch_;
};

}  // namespace pacer
