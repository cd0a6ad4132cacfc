#pragma once
// The logistic family of binary calibrators, used one-vs-rest (recalibrators/one_vs_rest.hpp):
//   logistic  q = σ(a f + c), f = log s - log(1 - s), fitted by maximum likelihood on the 0/1
//             outcomes (with a = 1, c = 0 the identity is in the family);
//   platt     the same model with Platt's (1999) smoothed targets (N+ + 1)/(N+ + 2) for
//             positives and 1/(N- + 2) for negatives, so the fit always exists;
//   beta      q = σ(a log s - b log(1 - s) + c) with a, b >= 0 (Kull et al. 2017): fitted as
//             a logistic regression on (log s, -log(1 - s)); a negative coefficient is set to
//             0 and the fit repeated without it (the betacal package's procedure). Scores are
//             clipped to [eps, 1 - eps], eps = 2^-52, as betacal does;
//   platt_probability  q = σ(a s + c) on the score itself, with Platt's targets: scikit-learn's
//             sigmoid calibration (_sigmoid_calibration, CalibratedClassifierCV(method="sigmoid")
//             on predict_proba), which is what probmetrics/CalArena call "platt";
//   quadratic q = σ(c + a f + b f^2), f = logit(s), by maximum likelihood with no penalty
//             (probmetrics' BinaryLogisticCalibrator(type="quadratic"), CalArena's quadratic
//             scaling); with b = 0 it is the logistic model above.
// Logs of scores use safe_log (scores of exactly 0 or 1 stay finite). Fits are Newton's method
// with step halving on the log-likelihood, to a step below 1e-12. Maximum likelihood does not
// exist when the outcomes are separable by the score (every positive scores at least every
// negative, or the reverse, including a class with no positives): logistic and beta then throw
// DomainError naming the problem; platt's targets keep it finite.
#include <memory>

#include "recalibrators/binary_calibrator.hpp"

namespace calbench {

enum class LogisticKind { logistic, platt, beta, platt_probability, quadratic };

class LogisticCalibrator : public BinaryCalibrator {
 public:
  explicit LogisticCalibrator(LogisticKind kind) : kind_(kind) {}
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override;
  std::string map_kind() const override;

 private:
  LogisticKind kind_;
};

// Maximum-likelihood logistic regression of targets t_i in [0, 1] on rows of `features`
// (n x d, row-major, d <= 3, an intercept column included by the caller). Throws DomainError
// (prefixed by `what`) when Newton's method diverges.
std::vector<double> fit_logistic_regression(std::span<const double> features, std::size_t d,
                                            std::span<const double> targets,
                                            const std::string& what);

// The fitted maps, rebuilt from their parameters (recalibrators/restore_model.hpp):
// σ(slope logit(s) + intercept) and σ(a log s - b log(1 - s) + c);
std::unique_ptr<const BinaryMap> logit_linear_map(double slope, double intercept);
std::unique_ptr<const BinaryMap> beta_map(double a, double b, double c);
// σ(slope s + intercept) and σ(intercept + linear logit(s) + quadratic logit(s)^2).
std::unique_ptr<const BinaryMap> probability_linear_map(double slope, double intercept);
std::unique_ptr<const BinaryMap> logit_quadratic_map(double intercept, double linear,
                                                     double quadratic);

// True when the outcomes (0/1) are separable by the score: no positives, no negatives, or
// every positive score >= every negative one or <= every negative one.
bool separable(std::span<const double> scores, std::span<const double> outcomes);

}  // namespace calbench
