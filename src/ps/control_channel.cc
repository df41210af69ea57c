#include "ps/control_channel.h"

#include <chrono>

#include "pacer/error.h"
#include "ps/str_cat.h"

namespace pacer {

struct ControlChannel::State {
  explicit State(SessionCore& s) : session(s) {}

  void OnResponse(Message&& msg) {
    std::lock_guard<std::mutex> lock(mu);
    if (msg.meta.request_id() != request_id || static_cast<int>(answers.size()) == expected) {
      return;  // of an exchange that timed out
    }
    answers.push_back(msg.meta);
    done.notify_all();
  }

  SessionCore& session;
  int client_id = -1;
  std::mutex mu;
  std::condition_variable done;
  int64_t request_id = 0;
  int expected = 0;
  std::vector<proto::Meta> answers;
  bool cancelled = false;
};

ControlChannel::ControlChannel(SessionCore& session) : state_(std::make_shared<State>(session)) {
  std::weak_ptr<State> weak = state_;
  state_->client_id = session.AttachClient([weak](Message&& msg) {
    if (auto state = weak.lock()) state->OnResponse(std::move(msg));
  });
}

ControlChannel::~ControlChannel() { state_->session.DetachClient(state_->client_id); }

int ControlChannel::client_id() const { return state_->client_id; }

int64_t ControlChannel::Begin(int answers) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->expected = answers;
  state_->answers.clear();
  return ++state_->request_id;
}

std::vector<proto::Meta> ControlChannel::Wait(const std::string& what) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  const double timeout_s = s.session.config().timeout_s;
  const bool ended = s.done.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] {
    return s.cancelled || static_cast<int>(s.answers.size()) == s.expected;
  });
  if (s.cancelled) throw Error(StrCat(what, ": cancelled, the job is ending"));
  if (!ended) {
    throw TimeoutError(StrCat(what, ": ", s.answers.size(), " of ", s.expected,
                              " answers came within ", timeout_s, " s"));
  }
  return s.answers;
}

void ControlChannel::Cancel() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->cancelled = true;
  state_->done.notify_all();
}

}  // namespace pacer
