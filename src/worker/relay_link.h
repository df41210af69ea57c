#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "pacer/buffer.h"
#include "pacer/detail/response_stamp.h"
#include "pacer/types.h"
#include "ps/cluster/control_channel.h"
#include "worker/iteration_part.h"

namespace pacer {

class Node;

// STRET's relay on one worker (STRAGGLERS.md section 6). A straggler with a slow link to the
// servers sends its gradients to a partner, a worker with a fast link to it; the partner adds them
// to its own, pushes once for both (the servers count both workers), and forwards the parameters
// it pulls. The scheduler orders it (RELAY_ORDER). Both roles may be this worker's, for different
// peers, but not at once: a worker that relays for others sends its own gradients itself.
//
// When a relay starts or ends, both ends must agree on the clock: the partner waits for the
// gradients of every clock in the relay's window, and the straggler must not push those clocks
// itself. The straggler asks (RELAY_START at the start of an iteration), and the partner answers
// with the first clock whose pushes it has not begun; the straggler relays from there. It ends a
// relay at the start of an iteration (RELAY_STOP), before it sends anything of that clock, so
// every gradient the partner waits for comes or is known not to. The scheduler may also order a
// worker to withhold its gradients (from its next iteration), which a partner never does. Every
// wait has the session's deadline and ends when the job fails or the peer is excluded.
class RelayLink : public IterationPart {
 public:
  explicit RelayLink(Node& node);
  ~RelayLink();
  RelayLink(const RelayLink&) = delete;
  RelayLink& operator=(const RelayLink&) = delete;

  // The straggler's side.
  // At the start of iteration `clock`: starts, moves or ends the relay as last ordered.
  void Begin(int64_t clock, IterationPlan& plan) override;
  // The report names the partner the iteration's gradients went through.
  void End(IterationReport& report) override;
  // The partner this worker's gradients of `clock` go through, or -1: to the servers.
  int PartnerFor(int64_t clock) const;
  // Whether this iteration's gradients are withheld (STRET's WITHHOLD, as last ordered when the
  // iteration began): pushes carry no values and weight 0, so the worker leaves the updates and
  // still resolves its clocks and pulls.
  bool Withholds() const;
  void SendGradient(int64_t clock, int unit, Key key, const float* values, size_t count,
                    double weight);
  // Waits for the parameters the partner pulled for unit `unit` of `clock` and copies them to
  // `out`. Throws TimeoutError or LostRankError naming the partner.
  ResponseStamp ReceiveParameters(int64_t clock, int unit, float* out, size_t count);

  // The partner's side.
  // This worker begins pushing `clock`: a relay asked for from now on starts at the next clock.
  void BeginPushing(int64_t clock);
  // A straggler's gradient of one key: weight x its gradient, `count` floats.
  struct Relayed {
    int rank = -1;
    Buffer values;
    double weight = 0;
  };
  // Waits for the gradients of unit `unit` (count floats) of `clock` from every straggler
  // relayed through this worker then. Throws TimeoutError or LostRankError naming the straggler,
  // Error for a gradient of another size.
  std::vector<Relayed> Gather(int64_t clock, int unit, size_t count);
  void ForwardParameters(int64_t clock, int unit, Key key, const std::vector<int>& stragglers,
                         const float* values, size_t count, const ResponseStamp& stamp);

 private:
  struct Window {
    int64_t start = 0;
    int64_t stop = INT64_MAX;  // the first clock not relayed
  };
  struct Arrival {
    Buffer values;
    double weight = 0;
    ResponseStamp stamp;
  };
  using Slot = std::tuple<int, int64_t, int>;  // peer rank, clock, unit

  void OnOrder(Message&& msg);
  void OnStart(Message&& msg);
  void OnStop(Message&& msg);
  void OnArrival(Message&& msg);
  // A relay message of `clock` and key unit `unit`, with `key`'s values if any.
  Message Make(proto::Command command, int64_t clock, int unit, Key key, const float* values,
               size_t count) const;
  // Waits for `slot` (or `give_up`, under the lock); throws naming `what` past the deadline.
  Arrival Await(const Slot& slot, const std::string& what, const std::function<bool()>& give_up);

  Node& node_;
  ControlChannel channel_;  // RELAY_START's answers
  std::shared_ptr<void> failure_watch_, exclusion_watch_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::string failure_;
  std::vector<int> excluded_;
  int ordered_partner_ = -1;  // as the scheduler last said
  bool ordered_withhold_ = false;
  bool withholding_ = false;  // this iteration
  int partner_ = -1;          // in force from relay_from_
  int64_t relay_from_ = 0;
  int64_t first_open_clock_ = 0;               // the first clock this worker has not pushed
  std::map<int, std::vector<Window>> relays_;  // by straggler rank, through this worker
  std::map<Slot, Arrival> arrivals_;           // gradients (partner) or parameters (straggler)
};

}  // namespace pacer
