#include "scheduler/sas_balancer.h"

#include <algorithm>
#include <utility>

namespace pacer {

SasBalancer::SasBalancer(int num_servers, int num_ranges, std::vector<double> bandwidth,
                         const straggler::SasOptions& options)
    : policy_(options),
      bandwidth_(std::move(bandwidth)),
      seconds_per_byte_(num_servers),
      load_(num_ranges, 0),
      pending_(num_ranges, 0) {
  bandwidth_.resize(num_servers, 0);
}

bool SasBalancer::Observe(int server, const ServerReport& report) {
  if (server < 0 || server >= static_cast<int>(seconds_per_byte_.size()) ||
      report.range_bytes.size() != pending_.size()) {
    return false;
  }
  for (size_t r = 0; r < pending_.size(); ++r) {
    pending_[r] += static_cast<double>(report.range_bytes[r]);
  }
  if (report.bytes_in >= kMinWorkBytes && report.service_s > 0) {
    std::deque<double>& samples = seconds_per_byte_[server];
    samples.push_back(report.service_s / static_cast<double>(report.bytes_in));
    if (samples.size() > kSamples) samples.pop_front();
  }
  return true;
}

straggler::SasDecision SasBalancer::Decide(const std::vector<int>& owners) {
  const bool warming_up = ++boundaries_ <= kWarmupBoundaries;
  for (size_t r = 0; r < load_.size(); ++r) {
    load_[r] = warming_up ? 0 : kLoadDecay * load_[r] + pending_[r];
    pending_[r] = 0;
  }
  if (boundaries_ < kWarmupBoundaries + kMeasuredBoundaries) return {};
  std::vector<straggler::KeyRangeLoad> ranges;
  for (size_t r = 0; r < load_.size() && r < owners.size(); ++r) {
    if (load_[r] > 0) ranges.push_back({static_cast<int>(r), load_[r], owners[r]});
  }
  std::vector<double> seconds_per_byte;  // 0: not known, counts as the median server
  for (size_t s = 0; s < seconds_per_byte_.size(); ++s) {
    std::vector<double> sorted(seconds_per_byte_[s].begin(), seconds_per_byte_[s].end());
    std::sort(sorted.begin(), sorted.end());
    const double measured = sorted.size() == kSamples ? sorted[kSamples / 2] : 0;
    const double link = bandwidth_[s] > 0 ? 1 / bandwidth_[s] : 0;
    seconds_per_byte.push_back(std::max(measured, link));
  }
  return policy_.Decide(ranges, seconds_per_byte);
}

}  // namespace pacer
