#pragma once
// `probmetrics_ece`: the ece-B / rmsce-B / mce-B of probmetrics (dholzmueller/probmetrics
// @34123ba, probmetrics/metrics.py `CalibrationError`, through `TorchmetricsClassificationMetric
// ._compute_mean`), which is torchmetrics' CalibrationError (v1.4.3,
// functional/classification/calibration_error.py) after three steps of its own:
//   1. classes absent from the labels are dropped (torch_utils.py `remove_missing_classes`:
//      their columns removed, the labels renumbered), so K' <= K columns remain;
//   2. p clamped to [1e-7, 1 - 1e-7] and each row divided by its sum (float64, the input's type);
//   3. K' = 2: torchmetrics' *binary* error on the second remaining column, q_1, against
//      1{y = that class} (float64); K' >= 3: its *multiclass* (top-label) error on max q
//      against 1{argmax q = y}, in float32 (confidences .float(), edges torch.linspace in float32,
//      per-bin sums by scatter_add_ in float32, in row order).
// Bins: torch.linspace(0, 1, B + 1) edges (ATen's symmetric formula), bucketize(right=True) - 1,
// i.e. [e_i, e_(i+1)), and a score of exactly 1 in an extra bin B. l1: sum_b (n_b/n)|acc_b -
// conf_b|, l2: its root mean square, max: max_b |acc_b - conf_b| over all B + 1 bins (empty ones
// 0). The result is cast to float32 (torch.as_tensor(..., dtype=float32)), as the library
// returns it. With one class left (K' = 1) the library raises ValueError; this returns NaN.
//
// Hand-written rather than composed from BinnedEce: the three steps and the float32
// accumulation change the numbers (the `torchmetrics` convention accumulates in double and
// agrees with torchmetrics only to 5e-6; this reproduces probmetrics to float32 rounding).
#include "estimators/binning.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

struct ProbmetricsEceSpec {
  std::size_t bins = 15;  // probmetrics' names ece-15, rmsce-15, mce-15
  Norm norm = Norm::l1;   // l1 (ece), l2 (rmsce) or max (mce)
};

class ProbmetricsEce final : public Estimator {
 public:
  explicit ProbmetricsEce(ProbmetricsEceSpec spec);  // bins >= 1; norm l1, l2 or max
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  // K >= 3 (where every class occurs, as it does in the limit): the top-label error,
  // ece_top_l1 (l1) or ece_top_l2 (l2). K = 2: the binary error on p_1, whose population value
  // is classwise_ece_l1 (l1); l2 and max: their own population values.
  std::optional<Quantity> target() const override;
  std::optional<std::string> classes_problem(std::size_t classes) const override;

  // The target for K classes (target() answers for K >= 3 without knowing K).
  std::optional<Quantity> target_for(std::size_t classes) const;

 private:
  ProbmetricsEceSpec spec_;
};

}  // namespace calbench
