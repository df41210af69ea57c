#include "ps/cluster/control_channel.h"

#include <chrono>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

// The exchange under way, shared with the dispatcher's sink, which may outlive the channel.
struct ControlChannel::Exchange {
  Exchange(Dispatcher& d, double timeout) : dispatcher(d), timeout_s(timeout) {}

  void OnResponse(Message&& msg) {
    std::lock_guard<std::mutex> lock(mu);
    if (msg.meta.request_id() != request_id || static_cast<int>(answers.size()) == expected) {
      return;  // of an exchange that timed out
    }
    answers.push_back(msg.meta);
    done.notify_all();
  }

  Dispatcher& dispatcher;
  const double timeout_s;
  int client_id = -1;
  std::mutex mu;
  std::condition_variable done;
  int64_t request_id = 0;
  int expected = 0;
  std::vector<proto::Meta> answers;
  bool cancelled = false;
  std::string failure;  // the job's, once it failed
};

ControlChannel::ControlChannel(Cluster& cluster, Dispatcher& dispatcher, double timeout_s)
    : exchange_(std::make_shared<Exchange>(dispatcher, timeout_s)) {
  std::weak_ptr<Exchange> weak = exchange_;
  exchange_->client_id = dispatcher.AttachClient([weak](Message&& msg) {
    if (auto exchange = weak.lock()) exchange->OnResponse(std::move(msg));
  });
  // The channel's own reference outlives the watch (the token goes first), so a watcher never
  // drops the last one.
  failure_watch_ = cluster.WatchFailure([exchange = exchange_.get()](const std::string& why) {
    std::lock_guard<std::mutex> lock(exchange->mu);
    exchange->failure = why;
    exchange->done.notify_all();
  });
}

ControlChannel::~ControlChannel() {
  failure_watch_.reset();
  exchange_->dispatcher.DetachClient(exchange_->client_id);
}

Message ControlChannel::Request(proto::Command command, int sender, int app_id,
                                int64_t request_id) const {
  Message request;
  request.meta.set_command(command);
  request.meta.set_sender(sender);
  request.meta.set_app_id(app_id);
  request.meta.set_client_id(exchange_->client_id);
  request.meta.set_request_id(request_id);
  return request;
}

int64_t ControlChannel::Begin(int answers) {
  std::lock_guard<std::mutex> lock(exchange_->mu);
  exchange_->expected = answers;
  exchange_->answers.clear();
  return ++exchange_->request_id;
}

std::vector<proto::Meta> ControlChannel::Wait(const std::string& what) {
  Exchange& s = *exchange_;
  std::unique_lock<std::mutex> lock(s.mu);
  const double timeout_s = s.timeout_s;
  const bool ended = s.done.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] {
    return s.cancelled || !s.failure.empty() || static_cast<int>(s.answers.size()) == s.expected;
  });
  if (!s.failure.empty()) throw LostRankError(StrCat(what, ": ", s.failure));
  if (s.cancelled) throw Error(StrCat(what, ": cancelled, the job is ending"));
  if (!ended) {
    throw TimeoutError(StrCat(what, ": ", s.answers.size(), " of ", s.expected,
                              " answers came within ", timeout_s, " s"));
  }
  return s.answers;
}

void ControlChannel::Cancel() {
  std::lock_guard<std::mutex> lock(exchange_->mu);
  exchange_->cancelled = true;
  exchange_->done.notify_all();
}

}  // namespace pacer
