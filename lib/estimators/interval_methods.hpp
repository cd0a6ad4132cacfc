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
// - analytic: for Kumar et al. 2019's debiased squared error S (SquaredErrorVariance),
//   the normal interval S -/+ z sqrt(V) with its delta-method variance V
//   (binned_ece.hpp), mapped through sqrt(max(0, .)) when the estimator reports the root.
// - bias_corrected: for an estimator with a model-based bias estimate beta
//   (BiasModel: the binned L1 errors, bin_gap_bias.hpp), the corrected
//   estimate U = T - beta and the normal interval U -/+ z sd*(U), sd*(U) the sd of U over the
//   bootstrap resamples (U* = T* - beta*, beta* by FiniteSampleBias below), joined with 0 as
//   `consistency` is when the calibration test does not reject. The basic interval corrects
//   by the bootstrap's bias estimate, the bias of |gap| at the observed gaps; beta is the bias
//   at the debiased gaps, which is larger where the true gaps are within a few sd of 0, the
//   regime where the bias is of the order of the spread. The sd of U, not of T: the
//   correction falls as |gap| grows, so U varies more than T. (docs/intervals.md: measured
//   coverage, and where it still falls short.)
// - fake: calibrated on a fake classifier fitted to the model's rows (calbench eval; the fit and
//   its simulation live in fit/fake_advice.hpp, a layer above this one, and arrive here as
//   values). With d_r = T_r - theta_F, r = 1..R, the estimator on R samples of the data's n
//   drawn from the fake, minus its reference theta_F under the fake (the truth of its target,
//   or its own population value), the interval
//       [t - q_d(1 - alpha), t - q_d(alpha)]
//   is the basic interval with the fake's law of T - theta standing in for the model's, where
//   the bootstrap's T* - t stands in for it in `basic` (Davison & Hinkley 1997, eq. 5.6). It
//   corrects the bias the fake predicts at n, which the bootstrap underestimates where a
//   noisy |gap| is biased most: where the gaps are near 0. Joined with 0 as `consistency` is
//   when the calibration test does not reject: a fake fitted to the rows of a nearly calibrated
//   model carries the rows' noise as miscalibration, so its bias correction overshoots there
//   (measured: docs/intervals.md, "Fake-calibrated intervals", with the derivation).
//   calbench eval reports its hull with the estimator's default interval (runners/eval.cpp):
//   where the fake's fitting noise shifts this interval, the default's stands.
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "estimators/estimator.hpp"
#include "estimators/uncertainty.hpp"

namespace calbench {

enum class IntervalMethod { percentile, basic, bca, consistency, analytic, bias_corrected, fake };

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
  std::optional<double> corrected;              // U = T - beta (bias_corrected)
  std::span<const double> corrected_bootstrap;  // U on the R bootstrap resamples
  std::span<const double> fake_deviations;      // T_r - theta_F on the fake's R samples (fake)
};

// beta, an estimator's BiasModel::finite_sample_bias (0 where it has none), as a statistic:
// bootstrapped on the resamples T* comes from, it gives bias_corrected's U* = T* - beta*
// without computing T* a second time.
class FiniteSampleBias final : public Estimator {
 public:
  explicit FiniteSampleBias(const Estimator& inner)
      : inner_(&inner),
        model_(inner.capabilities().bias_model),
        bins_(inner.capabilities().fixed_top_label_bins) {}
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override {
    return model_ ? model_->finite_sample_bias(sample, workspace) : 0.0;
  }
  std::optional<Quantity> target() const override { return inner_->target(); }
  // beta from the inner estimator's bin sums, when it has them.
  Capabilities capabilities() const override {
    return {.fixed_top_label_bins = bins_.inner ? &bins_ : nullptr};
  }

 private:
  struct BiasFromBins final : FixedTopLabelBins {
    explicit BiasFromBins(const FixedTopLabelBins* bins) : inner(bins) {}
    std::size_t bins() const override { return inner->bins(); }
    std::size_t bin_of(double confidence) const override { return inner->bin_of(confidence); }
    double from_bin_sums(const TopLabelBinSums& sums) const override {
      return inner->finite_sample_bias_from(sums).value_or(0.0);
    }
    const FixedTopLabelBins* inner;
  };
  const Estimator* inner_;
  const BiasModel* model_;
  BiasFromBins bins_;
};

// Every estimator's intervals on one sample, with the resamples the requested methods need
// computed once (bootstrap and consistency always; the jackknife for bca, the
// corrected bootstrap for bias_corrected, squared_error for analytic). methods[m][e] is the m-th
// method of estimator e; observed[e] its value on the sample.
// The phases of sample_intervals as a runner shows them (the library prints nothing):
// begin(phase, total) on the calling thread before each resampling phase ("bootstrap",
// "consistency test", "jackknife"), then counter(done, total) from any
// thread after each resample of it. Empty functions are not called.
struct IntervalProgress {
  std::function<void(std::string_view phase, std::size_t total)> begin;
  ResampleCounter counter;
};
struct IntervalRequest {
  std::size_t resamples = 200;
  double level = 0.9;
  std::size_t jackknife_groups = 100;
  // The consistency test's p-values for every estimator (eval reports them). Without them the
  // label resamples are drawn only when a method needs the test (consistency, bias_corrected),
  // and SampleIntervals::p_values is empty; the intervals are the same bits either way.
  bool p_values = true;
  IntervalProgress progress = {};
  // [e]: estimator e's deviations T_r - theta_F on the fake's samples (fake); empty, or an
  // empty entry: the fake method does not apply to it.
  std::span<const std::vector<double>> fake_deviations = {};
};
// calbench eval's defaults (runners/eval.hpp), which calbench plan's width questions share so
// that a plan is for the interval eval will compute (docs/plan.md).
inline constexpr std::size_t eval_default_resamples = 1000;
inline constexpr std::size_t eval_default_jackknife_groups = 100;
struct SampleIntervals {
  std::vector<std::optional<Interval>> intervals;  // [m * E + e], nullopt: does not apply
  std::vector<double> p_values;                    // [e], the consistency test's
};
SampleIntervals sample_intervals(const Sample& sample, std::span<const Estimator* const> estimators,
                                 std::span<const double> observed,
                                 const std::vector<std::vector<IntervalMethod>>& methods,
                                 const IntervalRequest& request, const ResampleKey& key,
                                 Execution execution, ResampleWorkspace& resample,
                                 EstimatorWorkspace& workspace);

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
// [t - q(1 - alpha), t - q(alpha)] of the deviations (fake).
Interval fake_interval(double estimate, std::span<const double> deviations, double level);
// center -/+ z sd(bootstrap), sd with divisor R - 1 (bias_corrected before the join with 0).
Interval normal_interval(double center, std::span<const double> bootstrap, double level);

}  // namespace calbench
