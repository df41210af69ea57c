#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ps/bootstrap/bootstrap.h"

namespace pacer {

// The bootstrap of a job whose ranks are threads of one process: they meet in a Group they share.
class LocalBootstrap : public Bootstrap {
 public:
  // What the ranks of one in-process job share: a collective's contributions until all came.
  class Group {
   public:
    // `size` ranks on one host, "localhost"; or the host of each rank (as many as `size`).
    explicit Group(int size, std::vector<std::string> hosts = {});
    int size() const { return size_; }

   private:
    friend class LocalBootstrap;
    struct Round {
      std::vector<Bytes> contributions;
      int arrived = 0;
      int left = 0;  // ranks that took the result; the last one forgets the round
    };
    const int size_;
    std::vector<std::string> hosts_;
    std::mutex mu_;
    std::condition_variable changed_;
    std::map<int64_t, Round> rounds_;  // by the collective's number
  };

  LocalBootstrap(std::shared_ptr<Group> group, int rank);

  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }
  const std::string& host() const override { return group_->hosts_[rank_]; }
  std::vector<Bytes> AllGather(const Bytes& mine, std::chrono::milliseconds timeout) override;
  void Barrier(std::chrono::milliseconds timeout) override { AllGather({}, timeout); }

 private:
  std::shared_ptr<Group> group_;
  const int rank_;
  int64_t next_round_ = 0;  // this rank's count of collectives
};

}  // namespace pacer
