#include "ps/bootstrap/local_bootstrap.h"

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

LocalBootstrap::Group::Group(int size, std::vector<std::string> hosts)
    : size_(size), hosts_(std::move(hosts)) {
  if (hosts_.empty()) hosts_.assign(size, "localhost");
  if (static_cast<int>(hosts_.size()) != size) {
    throw Error(StrCat("a local bootstrap of ", size, " ranks given ", hosts_.size(), " hosts"));
  }
}

LocalBootstrap::LocalBootstrap(std::shared_ptr<Group> group, int rank)
    : group_(std::move(group)), rank_(rank) {
  if (rank < 0 || rank >= group_->size()) {
    throw Error(StrCat("rank ", rank, " outside a local bootstrap of ", group_->size(), " ranks"));
  }
}

std::vector<Bootstrap::Bytes> LocalBootstrap::AllGather(const Bytes& mine,
                                                        std::chrono::milliseconds timeout) {
  Group& g = *group_;
  const int64_t number = next_round_++;
  std::unique_lock<std::mutex> lock(g.mu_);
  Group::Round& round = g.rounds_[number];
  if (round.contributions.empty()) round.contributions.resize(g.size_);
  round.contributions[rank_] = mine;
  if (++round.arrived == g.size_) g.changed_.notify_all();
  if (!g.changed_.wait_for(lock, timeout, [&] { return round.arrived == g.size_; })) {
    const int arrived = round.arrived;
    throw TimeoutError(StrCat("rank ", rank_, ": bootstrap step ", number, " timed out after ",
                              timeout.count(), " ms with ", arrived, " of ", g.size_,
                              " ranks arrived"));
  }
  std::vector<Bytes> all = round.contributions;
  if (++round.left == g.size_) g.rounds_.erase(number);
  return all;
}

}  // namespace pacer
