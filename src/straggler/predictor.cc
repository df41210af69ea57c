#include "straggler/predictor.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace pacer {
namespace straggler {
namespace {

// Searching for a period costs O(history^2 / 2); every few steps is often enough.
constexpr size_t kSearchEvery = 10;

double Sum(const std::deque<double>& d) { return std::accumulate(d.begin(), d.end(), 0.0); }

}  // namespace

PeriodicPredictor::PeriodicPredictor(const PredictorOptions& options)
    : options_(options), alpha_(2.0 / (std::max(1, options.window) + 1)) {}

void PeriodicPredictor::Observe(double value) {
  if (started_) {
    if (value > 0) {
      error_sum_ += std::abs(Predict() - value) / value;
      ++errors_;
    }
    auto record = [&](std::deque<double>* errors, double predicted) {
      errors->push_back(std::abs(predicted - value));
      while (errors->size() > static_cast<size_t>(std::max(1, options_.max_period))) {
        errors->pop_front();
      }
    };
    record(&mean_errors_, last_mean_);
    if (period_ > 0) {
      record(&periodic_errors_, last_periodic_);
    } else {
      periodic_errors_.clear();
    }
  }
  mean_ = started_ ? mean_ + alpha_ * (value - mean_) : value;
  started_ = true;
  history_.push_back(value);
  while (history_.size() > 2 * static_cast<size_t>(options_.max_period)) history_.pop_front();
  if (++since_search_ >= kSearchEvery) {
    since_search_ = 0;
    const size_t before = period_;
    FindPeriod();
    if (period_ != before && period_ > 0) ReplayPeriodicErrors();
  }
  last_mean_ = MeanPrediction();
  last_periodic_ = period_ > 0 ? PeriodicPrediction(1) : last_mean_;
  // Judged over one period: a mean tracks noise as well as anything, and is wrong exactly at
  // the turns of a periodic pattern, which only a whole period shows.
  periodic_better_ = false;
  if (period_ > 0 && periodic_errors_.size() >= period_) {
    const auto last = [&](const std::deque<double>& d) {
      return std::accumulate(d.end() - static_cast<std::ptrdiff_t>(period_), d.end(), 0.0);
    };
    periodic_better_ = last(periodic_errors_) < last(mean_errors_);
  }
}

double PeriodicPredictor::PredictAhead(int steps) const {
  if (!started_) return 0;
  return periodic_better_ ? PeriodicPrediction(steps) : MeanPrediction();
}

double PeriodicPredictor::PeriodicPrediction(int steps) const {
  // Within a period of the last value; further ahead is the same phase of the next period.
  const size_t ahead = (static_cast<size_t>(std::max(1, steps)) - 1) % period_;
  const size_t n = history_.size();
  double total = history_[n - period_ + ahead];
  int count = 1;
  if (n >= 2 * period_) {
    total += history_[n - 2 * period_ + ahead];
    ++count;
  }
  return total / count;
}

void PeriodicPredictor::FindPeriod() {
  const size_t n = history_.size();
  period_ = 0;
  if (n < 8) return;
  const double mean = Sum(history_) / static_cast<double>(n);
  std::vector<double> x(history_.begin(), history_.end());
  double variance = 0;
  for (double& v : x) {
    v -= mean;
    variance += v * v;
  }
  if (variance <= 0) return;
  // The autocorrelation stays high at small lags for any slowly varying series; a period is a
  // peak after it has first dropped below zero.
  const size_t max_lag = std::min(n / 2, static_cast<size_t>(options_.max_period));
  std::vector<double> r(max_lag + 1, 0);
  size_t first_negative = 0;
  for (size_t lag = 1; lag <= max_lag; ++lag) {
    double s = 0;
    for (size_t i = 0; i + lag < n; ++i) s += x[i] * x[i + lag];
    r[lag] = s / variance * static_cast<double>(n) / static_cast<double>(n - lag);
    if (first_negative == 0 && r[lag] < 0) first_negative = lag;
  }
  if (first_negative == 0) return;
  double best = 0;
  for (size_t lag = first_negative; lag <= max_lag; ++lag) best = std::max(best, r[lag]);
  if (best < options_.min_correlation) return;
  // The first peak near the best, not a multiple of the period: the shortest lag that comes
  // close, then up its slope to the top.
  size_t lag = first_negative;
  while (r[lag] < 0.9 * best) ++lag;
  while (lag < max_lag && r[lag + 1] >= r[lag]) ++lag;
  period_ = lag;
}

void PeriodicPredictor::ReplayPeriodicErrors() {
  // What the model with this period would have erred over the history it can judge, so that it
  // takes over as soon as it is found rather than a period later (a phase later, in S5).
  periodic_errors_.clear();
  const size_t n = history_.size();
  const size_t judged = std::min(mean_errors_.size(), n - period_);
  for (size_t k = n - judged; k < n; ++k) {
    double predicted = history_[k - period_];
    if (k >= 2 * period_) predicted = (predicted + history_[k - 2 * period_]) / 2;
    periodic_errors_.push_back(std::abs(predicted - history_[k]));
  }
}

double PeriodicPredictor::RelativeError() const {
  return errors_ == 0 ? 0 : error_sum_ / static_cast<double>(errors_);
}

std::unique_ptr<Predictor> MakePredictor(const PredictorOptions& options) {
  return std::make_unique<PeriodicPredictor>(options);
}

}  // namespace straggler
}  // namespace pacer
