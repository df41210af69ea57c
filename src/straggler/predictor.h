#pragma once

#include <cstddef>
#include <deque>
#include <memory>

namespace pacer {
namespace straggler {

// A cheap online model of one node's next iteration time. The interface lets a better model
// (the papers used an LSTM) take the default's place.
class Predictor {
 public:
  virtual ~Predictor() = default;
  virtual void Observe(double value) = 0;
  // The predicted next value; 0 before the first observation.
  double Predict() const { return PredictAhead(1); }
  // The value predicted `steps` (at least 1) observations ahead: what an order must act on when
  // it takes effect a step after it is sent.
  virtual double PredictAhead(int steps) const = 0;
  // Mean absolute one-step-ahead error relative to the observed value, over what was seen.
  virtual double RelativeError() const = 0;
  // Whether the prediction comes from a pattern of what is to come (a period) rather than from
  // the recent level, which only trails the values.
  virtual bool FollowsAPeriod() const = 0;
};

struct PredictorOptions {
  int window = 10;               // the exponentially weighted mean's span: alpha = 2 / (window + 1)
  int max_period = 400;          // longest periodic pattern looked for
  double min_correlation = 0.5;  // a period counts when the series correlates this well with itself
};

// The default model: an exponentially weighted mean of the recent values, and a periodic
// (seasonal autoregressive) fit that predicts the mean of the values one and two periods back,
// once the history's autocorrelation shows a period. Both predict every step; the one with the
// lower error over the last period is used, so a periodic slow phase is predicted before it
// starts while noise without a period falls back to the mean.
class PeriodicPredictor : public Predictor {
 public:
  explicit PeriodicPredictor(const PredictorOptions& options = {});

  void Observe(double value) override;
  double PredictAhead(int steps) const override;
  double RelativeError() const override;
  bool FollowsAPeriod() const override { return periodic_better_; }
  // The period in use, or 0.
  size_t period() const { return period_; }

 private:
  double MeanPrediction() const { return mean_; }
  // The value `steps` ahead at the same phase one and (if known) two periods back.
  double PeriodicPrediction(int steps) const;
  void FindPeriod();
  void ReplayPeriodicErrors();

  PredictorOptions options_;
  double alpha_;
  double mean_ = 0;
  bool started_ = false;
  std::deque<double> history_;  // the last 2 x max_period values
  size_t period_ = 0;
  size_t since_search_ = 0;
  // Recent absolute errors of each model, and the overall error of what was predicted.
  std::deque<double> mean_errors_, periodic_errors_;
  double last_mean_ = 0, last_periodic_ = 0;
  bool periodic_better_ = false;  // the model in use
  double error_sum_ = 0;
  size_t errors_ = 0;
};

std::unique_ptr<Predictor> MakePredictor(const PredictorOptions& options = {});

}  // namespace straggler
}  // namespace pacer
