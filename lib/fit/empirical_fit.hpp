#pragma once
// Fitting the `empirical` family (generators/empirical.hpp) to a model's outputs (docs/fit.md):
//
// 1. The rows are the model's own confidence vectors.
// 2. The bandwidth h: the largest h of a geometric grid that is at most the maximiser of the
//    leave-one-out log-likelihood of the Gaussian kernel density of the rows (in
//    centred-log-ratio coordinates, dimension K - 1, where the noise is isotropic with variance
//    h^2; evaluated at up to `bandwidth_rows` rows against all others) and that moves the mean
//    confidence E[max p] by at most `max_confidence_shift` of its standard error. The density
//    optimum alone is far too wide in K - 1 dimensions (h ~ 1 for Dirichlet-like data, which
//    sharpened the confidences and raised a fake's accuracy by 0.04, 2 standard errors); the
//    smoothing exists only to make the distribution continuous, so it may not change the
//    confidences by more than the data can see. Log-probabilities are held within
//    `bandwidth_span` of their row's largest in the density step, so that classes a model gives
//    1e-300 do not decide the distances. Duplicate rows (a forest's repeated outputs) drive it
//    to the smallest h: the plain bootstrap, which is what such data are.
// 3. The calibration curve s(t) = u + f(u) (generators/logit_spline.hpp) maximises the
//    penalised binary log-likelihood of 1{y = argmax p} given the top-label logit t (K >= 3)
//    or of 1{y = 1} given logit p_1 (K = 2), with the ridge penalty lambda |beta|^2 on the
//    B-spline coefficients: B-splines are local and sum to 1, so the penalty pulls f to 0,
//    the identity, wherever the data say little. lambda is chosen by `folds`-fold
//    cross-validated log-likelihood over a grid that includes lambda = infinity (the exact
//    identity, kept on ties), with two guards (the penalty rule at `penalties` below): the
//    likelihood decides whether the data show a miscalibration at all, and the finite penalty
//    is the one that made the fake's top-label ECE most accurate. Robustness: a row's
//    contribution to the score is (g - y) B(u), bounded by 1 whatever its probabilities, so no
//    handful of rows whose label got probability ~0 can decide the curve (the multinomial log p_y
//    of the parametric maps is unbounded there; docs/fit.md); and the curve is held constant beyond
//    the boundary knots (the 0.5 % and 99.5 % quantiles of t, within +-15).
// 4. Noise correction (off by default since the penalty 0.1: `noise_resamples`). The fitted
//    curve's distance from the diagonal,
//    D = mean_i |g(t_i) - sigmoid(t_i)| over the rows, is biased upward by the curve's sampling
//    noise (|.| of a noisy difference; the fake's top-label ECE is this distance under its
//    confidence distribution), which made near-calibrated models' fakes too miscalibrated
//    (docs/fit.md). `noise_resamples` bootstrap refits at the chosen penalty estimate the bias
//    (Efron & Tibshirani 1993, eq. 10.3: bias = mean of the refits' D - D); when it is positive,
//    the coefficients are scaled by kappa in [0, 1] so that D(kappa) = D - bias (bisection;
//    kappa = 0 is the identity within the knots). A curve the refits do not move further from
//    the diagonal is kept as fitted.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "fit/classwise_fit.hpp"
#include "generators/empirical.hpp"

namespace calbench {

struct EmpiricalFitOptions {
  std::size_t knots = 8;  // distinct knots at quantiles of t (fewer when t has fewer values)
  std::size_t folds = 5;
  // The penalty rule (docs/fit.md, "The penalty rule"), measured on the transfer study's 15
  // models on 4 fit sets each at 5,000 and at 1,000 rows, and on the same models' outputs with
  // labels redrawn to be calibrated (scripts/curve-alternatives.py --rules):
  // 1. the identity (lambda = infinity) against `penalties` by cross-validated likelihood, the
  //    identity kept on ties: 0.1 was the penalty that made the fake's top-label ECE most
  //    accurate at 5,000 rows; larger ones flattened near-calibrated curves;
  // 2. when a finite penalty won, `sharper_penalty` replaces it if it improves the
  //    cross-validated likelihood by more than one standard error of the folds' differences
  //    (a curve that must bend further, e.g. a model that is always confidently wrong);
  // 3. when the identity won, the cross-validated likelihood's choice among the identity and
  //    `fallback_penalties`: a miscalibration the curve at penalty 0.1 cannot yet resolve (few
  //    rows) is fitted with more shrinkage rather than not at all.
  // `fit --penalties` sets `penalties` and turns steps 2 and 3 off (the plain choice).
  std::vector<double> penalties = {0.1};
  double sharper_penalty = 0.01;                                                   // 0: no step 2
  std::vector<double> fallback_penalties = {0.01, 0.1, 1.0, 10.0, 100.0, 1000.0};  // empty: no 3
  std::size_t bandwidth_rows = 600;
  std::vector<double> bandwidths;  // empty: 0.005 * 1.5^j, j = 0..17 (0.005 to 4.9)
  double bandwidth_span = 30.0;
  double max_confidence_shift = 0.25;  // standard errors of the mean confidence
  std::uint64_t seed = 0;              // of the folds' shuffle (stream purpose split)
  // Bootstrap refits of the noise correction (step 4; 0: none, the default: at the penalty 0.1
  // it moved the fake's ECE away from the model's more often than towards it, docs/fit.md).
  std::size_t noise_resamples = 0;
  // The classwise map (K >= 3; fit/classwise_fit.hpp), fitted on the same folds after the curve.
  ClasswiseFitOptions classwise;
};

// A penalty's cross-validated log-likelihood (summed over the held-out rows); infinity is
// the identity.
struct PenaltyScore {
  double penalty = 0.0;
  double cv_log_likelihood = 0.0;
  std::vector<double> folds;  // the held-out log-likelihood of each fold
};

struct BandwidthScore {
  double bandwidth = 0.0;
  double loo_log_likelihood = 0.0;  // mean over the evaluation rows
  // E_h[max p] - mean max p of the rows, in standard errors of that mean (common noise draws
  // for every h, 4 per row).
  double confidence_shift = 0.0;
};

struct EmpiricalFit {
  EmpiricalSpec spec;
  std::vector<BandwidthScore> bandwidths;
  std::vector<PenaltyScore> penalties;
  double penalty = 0.0;        // chosen (infinity: the identity)
  std::string penalty_reason;  // why the penalty was chosen, in words
  // In-sample log-likelihood of the binary outcome under the identity and the chosen curve.
  double identity_log_likelihood = 0.0, log_likelihood = 0.0;
  // The noise correction (step 4): D of the curve as fitted, the mean D of its bootstrap
  // refits, and the factor kappa its coefficients were scaled by (1: kept as fitted).
  double distance = 0.0, distance_bootstrap = 0.0, shrinkage = 1.0;
  ClasswiseFit classwise;  // K >= 3: the classwise map's scores and choices
};

// The outcome the curve is fitted to, per row: t (the top-label logit, K = 2 logit p_1) and
// y (1{label = argmax p}, K = 2 1{label = 1}).
struct CurveData {
  std::vector<double> t, y;
};
CurveData curve_data(const Sample& data);

// Knots at quantiles of t (clamped to +-15), duplicates dropped; fewer than 2: none.
std::vector<double> quantile_knots(std::vector<double> t, std::size_t count);

// Throws DomainError when the data cannot be fitted (fewer than 2 rows).
EmpiricalFit fit_empirical(const Sample& data, const EmpiricalFitOptions& options = {});

}  // namespace calbench
