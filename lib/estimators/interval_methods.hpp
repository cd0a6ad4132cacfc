#pragma once
// Confidence intervals for an estimate on one sample, from the resampled values of
// estimators/uncertainty.hpp (docs/intervals.md: definitions, measured coverage, defaults).
//
// level = 1 - 2 alpha; q(.) is the type-7 quantile of the R bootstrap values (quantile_type7).
// - percentile: [q(alpha), q(1 - alpha)] (Efron & Tibshirani 1993, eq. 13.5).
// - basic: [2 t - q(1 - alpha), 2 t - q(alpha)], t the estimate (Davison & Hinkley 1997,
//   eq. 5.6): the bootstrap distribution of T* - t stands in for that of T - theta, so an
//   upward bias of T (as |.| of a noisy bin gap has) is subtracted, not added.
// - bca: [q(a1), q(a2)], a_i = Phi(z0 + (z0 + z_i) / (1 - a (z0 + z_i))), z_1 = Phi^-1(alpha),
//   z_2 = Phi^-1(1 - alpha) (Efron 1987, "Better bootstrap confidence intervals", JASA 82;
//   Efron & Tibshirani 1993, eqs. 14.9-14.15). Bias correction z0 = Phi^-1(f), f = (#{T* < t}
//   + #{T* = t}/2) / R (ties halved as scipy.stats.bootstrap does), f clamped to
//   [1/(2R), 1 - 1/(2R)] so that z0 stays finite. Acceleration from the jackknife:
//   a = sum_g d_g^3 / (6 (sum_g d_g^2)^(3/2)), d_g = mean(T_(.)) - T_(g) (eq. 14.15), over G
//   leave-one-group-out values (jackknife_values); with G = n this is the ordinary jackknife.
//   The grouped form has the same expectation to first order: for an estimate whose influence
//   values are IF_i, d_g is proportional to the sum U_g of IF over group g, and
//   sum U_g^3 / (sum U_g^2)^(3/2) ~ G m k3 / (G m s^2)^(3/2) = k3 / (s^3 sqrt(n)) for groups of
//   m = n / G rows, as for single rows (k3, s^2: third cumulant and variance of IF).
// - consistency: the inverted calibration test, for an estimator whose population value is 0
//   for every calibrated model (Estimator::vanishes_when_calibrated). With p the consistency
//   p-value (labels redrawn from p, Bröcker & Smith 2007) and B the basic interval:
//       the hull of B and {0} when p > 1 - level (the test of "error = 0" at size 1 - level
//       does not reject), else B.
//   It is a union of two confidence statements: error = 0 is kept whenever its own exact test
//   does not reject it, every error in B is kept. So its coverage is at least B's for every
//   model, and at least `level` for a calibrated one (the Monte Carlo test has size at most
//   1 - level, Davison & Hinkley 1997 eq. 4.11), where every interval built from the
//   estimator's bootstrap distribution alone lies above 0.
// - analytic: for Kumar et al. 2019's debiased squared error S (Estimator::squared_error),
//   the normal interval S -/+ z sqrt(V) with its delta-method variance V
//   (binned_ece.hpp), mapped through sqrt(max(0, .)) when the estimator reports the root.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "estimators/estimator.hpp"
#include "estimators/uncertainty.hpp"

namespace calbench {

enum class IntervalMethod { percentile, basic, bca, consistency, analytic };

// Every method, in the order of the enum; their config names.
const std::vector<IntervalMethod>& interval_methods();
std::string_view to_string(IntervalMethod method);

// The inputs of one estimator's interval on one sample; a method whose input is missing (no
// jackknife values, no p-value, no squared-error estimate) gives no interval.
struct IntervalInputs {
  double estimate = 0.0;
  std::span<const double> bootstrap;  // R values
  std::span<const double> jackknife;  // G leave-one-group-out values (bca)
  std::optional<double> p_calibrated;
  bool vanishes_when_calibrated = false;
  std::optional<SquaredErrorEstimate> squared;
};

// The interval of `method` at `level` in (0, 1); nullopt when the method does not apply to the
// inputs (consistency for an estimator not 0 under calibration, analytic without `squared`).
std::optional<Interval> interval_of(IntervalMethod method, const IntervalInputs& in, double level);

// The pieces, for tests and for callers that hold them apart.
Interval basic_interval(double estimate, std::span<const double> bootstrap, double level);
double jackknife_acceleration(std::span<const double> jackknife);
// z0 = Phi^-1(f) as above.
double bca_bias_correction(double estimate, std::span<const double> bootstrap);
Interval bca_interval(double estimate, std::span<const double> bootstrap,
                      std::span<const double> jackknife, double level);
// The same with a given acceleration a.
Interval bca_interval(double estimate, std::span<const double> bootstrap, double acceleration,
                      double level);
Interval analytic_interval(const SquaredErrorEstimate& squared, double level);

}  // namespace calbench
