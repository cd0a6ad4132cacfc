#pragma once
// `accuracy`, `brier` and `nll`: plain sample means.
// brier = (1/n) sum_i sum_k (p_ik - 1{y_i = k})^2, in [0, 2] (the sum over classes, as
//         Brier 1950 and sklearn's one-vs-rest sum; PyCalib divides by K).
// nll   = (1/n) sum_i -log max(p_{i,y_i}, DBL_MIN): a probability of exactly 0 on the true
//         class scores -log(DBL_MIN) = 708.40 instead of +inf, so one row cannot turn a mean
//         into inf (sklearn clips harder, at 2.2e-16).
#include "estimators/estimator.hpp"

namespace calbench {

class AccuracyEstimator final : public Estimator {
 public:
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return Quantity::accuracy; }
};

class BrierEstimator final : public Estimator {
 public:
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return Quantity::brier; }
};

class NllEstimator final : public Estimator {
 public:
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return Quantity::nll; }
};

}  // namespace calbench
