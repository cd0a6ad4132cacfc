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

// Murphy's (1973) decomposition of the Brier score, binned per class: for class k the rows
// are binned on p_k (calbench equal-width bins, `bins`), ybar_k = mean 1{y = k},
// and with n_kb rows, mean score pbar_kb and mean outcome ybar_kb in bin b:
//   reliability = sum_k sum_b (n_kb/n) (pbar_kb - ybar_kb)^2
//   resolution  = sum_k sum_b (n_kb/n) (ybar_kb - ybar_k)^2
//   uncertainty = sum_k ybar_k (1 - ybar_k)
// Then brier = reliability - resolution + uncertainty + W, where
// W = sum_k sum_b (n_kb/n) [var_b(p_k) - 2 cov_b(p_k, 1{y = k})] is the within-bin term; W = 0
// when every bin holds a single score value.
enum class BrierComponent { total, reliability, resolution, uncertainty };

// Scope top: the top-class Brier score (1/n) sum_i (max_k p_ik - 1{y_i = argmax_k p_ik})^2, the
// squared error of the confidence against correctness (as LLM calibration studies report it),
// computed as Z^2 - 2 Z o + o, linear in the outcome o, so that the truth engine's
// Rao-Blackwellised outcomes give its population value exactly; component total only.
enum class BrierScope { all, top };

class BrierEstimator final : public Estimator {
 public:
  // The components' equal-width bins when none are given (the registry row's default too).
  static constexpr std::size_t default_bins = 15;
  explicit BrierEstimator(BrierComponent component = BrierComponent::total,
                          std::size_t bins = default_bins, BrierScope scope = BrierScope::all);
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override;
  // The reliability term alone is an error measure.
  bool vanishes_when_calibrated() const override {
    return component_ == BrierComponent::reliability;
  }

 private:
  BrierComponent component_;
  std::size_t bins_;
  BrierScope scope_;
};

class NllEstimator final : public Estimator {
 public:
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return Quantity::nll; }
};

}  // namespace calbench
