#pragma once
// `cross_fitted_ce`: the cross-fitted ("variational") calibration error of probmetrics
// (Berta, Holzmüller, Jordan & Bach 2025, "Rethinking early stopping: refine, then calibrate";
// probmetrics.metrics.MetricsWithCalibration): fit a recalibrator g on k - 1 folds, apply it to
// the held-out fold, and report the mean loss of the model minus that of g o f over all rows,
//   CE = (1/n) sum_i [L(p_i, y_i) - L(g_{-fold(i)}(p_i), y_i)].
// Row i belongs to fold i mod k (deterministic, no RNG; interleaved, so data sorted by score or
// label still give folds alike). L is the NLL -log max(q_y, DBL_MIN) or the Brier score
// sum_k (q_k - 1{y = k})^2; both are written linear in the outcomes, so the truth engine's samples
// use c. A fold whose fit fails (a training part with one class) contributes 0 for its rows.
// With `mixture` (probmetrics' "-mix" calibrators, MixtureCalibrator with output_constant 1),
// g's output is mixed with the uniform vector, q <- (1 - w) q + w/K with w = 1/(m + 1), m the
// training rows: an isotonic fit that gives a class probability 0 then costs log(K (m + 1))
// under NLL instead of -log(DBL_MIN) = 708.
//
// Target (its own, computed by the truth engine): the improvement of the loss under the true
// calibration function, E L(p, y) - E L(r(p), y): E ||p - r(p)||^2 = canonical_l2^2 for Brier,
// E KL(r(p) || p) for NLL. The truth engine evaluates it on its samples as
// mean_i [L(p_i, c_i) - L(c_i, c_i)], exact where c = r(p) (injective maps); where several c share
// a p (top_label with gamma > 1 at K >= 3) it is an upper bound. The estimator converges instead
// to the improvement of the best g in the recalibrator's family, which is at most the target:
// probmetrics' authors' claim that the estimate avoids overestimation is bias <= 0 here
// (docs/estimators/cross_fitted.md measures it).
#include <memory>

#include "estimators/estimator.hpp"
#include "recalibrators/recalibrator.hpp"

namespace calbench {

enum class RefitLoss { nll, brier };

struct CrossFittedSpec {
  std::shared_ptr<const Recalibrator> method;
  RefitLoss loss = RefitLoss::nll;
  std::size_t folds = 5;
  bool mixture = true;
};

class CrossFittedError final : public Estimator {
 public:
  explicit CrossFittedError(CrossFittedSpec spec);
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return std::nullopt; }
  // The loss improvement under the true calibration function (see above).
  std::shared_ptr<const Estimator> population_estimator() const override;
  bool converges_to_target() const override { return false; }

 private:
  CrossFittedSpec spec_;
};

// mean_i [L(p_i, o_i) - L(c_i, o_i)] with o the outcomes (c on the truth engine's samples):
// the loss improvement under r(p) = c. Needs the sample's truth; 0 without it.
class TrueLossImprovement final : public Estimator {
 public:
  explicit TrueLossImprovement(RefitLoss loss) : loss_(loss) {}
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return std::nullopt; }

 private:
  RefitLoss loss_;
};

}  // namespace calbench
