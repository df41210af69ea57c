#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pacer/detail/routed_client.h"
#include "worker/relay_link.h"
#include "worker/tensor_layout.h"

namespace pacer {

// GradientSync's requests, one key (a unit of the TensorLayout) at a time. Each iteration a key
// has a push, limited by credit and sent by priority, and a pull that the server answers once the
// rule lets the next iteration start. Credit holds pushes only: a push completes without waiting
// for other workers, so workers that order their keys differently cannot block each other, and a
// worker sends every queued push before it blocks on a pull. That is why a key's push and pull go
// as two messages, back to back (no round trip between them), and not as one kPushPull: its one
// answer waits for every worker's push, so credit held until then would let two workers whose
// priorities order the keys differently wait on each other for good. Single-threaded, like its
// owner.
class KeyRequests {
 public:
  struct KeyState {
    int pushed_members = 0;
    bool queued = false, pushing = false, pulling = false, done = false;
    int priority = 0;
    uint64_t order = 0;  // when it was queued, then when its push was sent
    int push_ts = -1, pull_ts = -1;
    const float* send = nullptr;    // the gradient (as given, or staged)
    float* receive = nullptr;       // where the parameters land (the caller's, or staged)
    std::vector<float> send_stage;  // groups, and weighted gradients
    std::vector<float> receive_stage;
    std::vector<float*> member_params;  // staged receives: where each member's parameters go
    std::shared_ptr<ResponseStamp> answer;
    std::string error;
    bool timed_out = false;
    bool lost = false;  // the job lost a rank (LostRankError)
    // Kept across iterations: the version the next gradient is computed on.
    int64_t version = 0;
    // STRET's relay this iteration: this worker's gradient went to a partner, which pulls for it;
    // or the stragglers whose gradients this worker's push carries, and their weight.
    bool relayed_out = false;
    std::vector<int> carried;
    double carried_weight = 0;
    Buffer relayed_sum;  // what `send` points at when this worker carries stragglers' gradients
    // SMS's skip, kept across iterations: the gradient and weight last sent for the server to
    // keep, which a push "same as last" stands for (empty: the server keeps none).
    std::vector<float> last_sent;
    double last_weight = 0;
    // And on the pull side: whether this iteration's pull may be answered "unchanged", and the
    // parameters last received while skipping, which such an answer stands for.
    bool keep_parameters = false;
    std::vector<float> last_received;
  };
  // What went over the wire this iteration, and when.
  struct Traffic {
    int64_t bytes_out = 0, bytes_in = 0;
    int64_t pushes_skipped = 0, bytes_skipped = 0, pulls_unchanged = 0;
    bool any_push_sent = false;
    std::chrono::steady_clock::time_point first_push_sent, last_push_acked, last_pull_done;
  };

  // `skip_eps`: while skipping, a gradient within this relative distance of the last one sent
  // goes as "same as last" (and the servers answer pulls with parameters that moved little since
  // they last sent them "unchanged", by --skip_pull_eps).
  KeyRequests(detail::RoutedClient& kv, const TensorLayout& layout, int credit, double skip_eps)
      : kv_(kv), layout_(layout), credit_(credit), skip_eps_(skip_eps) {}
  // Abandons the pulls still in flight (an iteration left by an exception): their values would
  // land in the staging buffers freed here, or in the caller's.
  ~KeyRequests();
  KeyRequests(const KeyRequests&) = delete;
  KeyRequests& operator=(const KeyRequests&) = delete;
  // Sends this worker's gradients through a relay partner, or carries stragglers', as `relay`
  // says (null: never).
  void set_relay(RelayLink* relay) { relay_ = relay; }

  // One state per unit of the layout, its staging buffers sized.
  void Prepare();
  KeyState& state(int u) { return states_[u]; }
  size_t size() const { return states_.size(); }
  // Resets the per-iteration state; pushes from now on carry `clock` and `weight`, and with
  // `skip_unchanged` (SMS's skip), a gradient little changed since the last one sent goes as
  // "same as last".
  void StartIteration(int64_t clock, double weight, bool skip_unchanged);
  // Forgets the last iteration's relays: a broadcast or a fetch, outside iterations, asks the
  // servers for this worker alone, and forwards nothing.
  void ForgetRelays();
  // Changes the weight of this iteration's pushes not yet sent.
  void set_weight(double weight) { weight_ = weight; }
  double weight() const { return weight_; }
  const Traffic& traffic() const { return traffic_; }

  // Queues unit u's push and pull (all its members' gradients are staged or in place).
  void Queue(int u, int priority);
  // Sends one request for unit u now, outside the credit (broadcasts and fetches).
  int Send(int u, detail::Operation op, int64_t clock, bool init, bool after_own_push);
  // Sends queued pushes, highest priority first, while credit lasts.
  void Pump();
  // Releases the credit of finished pushes; with `block`, waits for the oldest one first.
  void ReleasePushes(bool block);
  // Waits for unit u's pull (its error, if any, stays in its state) and copies staged values to
  // the members' parameters.
  void FinishPull(int u);
  // Waits until unit u is done, sending every queued push first.
  void WaitUnit(int u);

 private:
  const TensorLayout::Unit& unit(int u) const { return layout_.units()[u]; }
  void Await(int u, int ts);
  // Sends unit u's push and pull: to the servers (carrying the gradients relayed through this
  // worker), or to the relay partner.
  void SendPushPull(int u);
  void CarryRelayed(int u, const std::vector<RelayLink::Relayed>& relayed);
  // Whether unit u's gradient goes as "same as last": skipping, the server keeps the last one,
  // of the same weight, and ||g - g_last|| <= skip_eps x ||g_last||.
  bool Unchanged(int u) const;
  // Unit u's pull answered: the parameters it received are kept (while skipping) or freed, or an
  // answer "unchanged" restores the ones kept. False (an error in its state) for an "unchanged"
  // this worker cannot stand for.
  bool KeepParameters(int u);
  // Stores what a failed wait threw in unit u's state.
  void Fail(int u, const std::function<void()>& wait);
  bool AnyQueued() const;

  detail::RoutedClient& kv_;
  RelayLink* relay_ = nullptr;
  const TensorLayout& layout_;
  const int credit_;
  const double skip_eps_;
  std::vector<KeyState> states_;
  int pushes_inflight_ = 0;
  uint64_t next_order_ = 0;
  int64_t clock_ = 0;
  double weight_ = 1;
  bool withholding_ = false;   // this iteration's pushes carry no values
  bool relaying_out_ = false;  // this iteration's gradients go to the relay partner
  bool skipping_ = false;      // this iteration's pushes skip unchanged gradients
  Traffic traffic_;
};

}  // namespace pacer
