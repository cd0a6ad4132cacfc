#pragma once
// The `beta_binary` family fitted to a binary model's outputs (docs/fit.md), the way caltrain
// (Roelofs et al. 2022, "Mitigating bias in calibration error estimation"; google-research
// caltrain, glm_modeling) fits its simulation settings to real models:
// 1. the score distribution: f = p_1. The rows with f == 1 exactly are the point mass, whose
//    maximum-likelihood weight is their fraction; the others are f ~ Beta(a, b), fitted by
//    maximum likelihood (caltrain: Dataset.beta_shift_fit, a brute-force grid on the same
//    likelihood). Beta(a, b) of f is Dirichlet(b, a) of (1 - f, f), so the Dirichlet MLE
//    (fit/dirichlet_mle.hpp) does it.
// 2. the calibration curve phi(f) = P(y = 1 | f): each of the family's curves (identity,
//    polynomial d, logistic a b, logit_logit a b) by maximum likelihood of the labels given f,
//    the one with the lowest AIC = 2 k + 2 NLL chosen (caltrain: GLMModel.fit, AIC as there).
//    Every curve's NLL is convex in its parameters (a logit-link GLM in f or logit f; a
//    log-link GLM in log f), so Newton's method finds the maximum where caltrain searches a
//    grid on (-5, 5)^k and polishes it.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.hpp"
#include "generators/beta_binary.hpp"

namespace calbench {

// CalibrationCurve's alternatives, in its order (to_string indexes curve_names).
enum class CurveKind { identity, polynomial, logistic, logit_logit };

inline constexpr CurveKind all_curve_kinds[] = {CurveKind::identity, CurveKind::polynomial,
                                                CurveKind::logistic, CurveKind::logit_logit};

std::string_view to_string(CurveKind kind);

struct BetaScoreFit {
  double a = 1.0, b = 1.0;      // f ~ Beta(a, b) on the rows with f < 1
  double point_mass = 0.0;      // the fraction of rows with f == 1
  std::size_t ones = 0;         // rows with f == 1
  double log_likelihood = 0.0;  // of the scores: sum of log density (f < 1) and log mass (f = 1)
  std::size_t free_parameters = 2;  // a, b, and the point mass when there is one
};

struct CurveFit {
  CalibrationCurve curve = IdentityCurve{};
  double negative_log_likelihood = 0.0;  // -sum_i log P(y_i | f_i), over the rows with f < 1
  std::size_t free_parameters = 0;
  double aic = 0.0;  // 2 free_parameters + 2 negative_log_likelihood
};

struct BetaBinaryFit {
  BetaScoreFit scores;
  std::vector<CurveFit> candidates;   // every curve that was fitted
  std::vector<std::string> rejected;  // curves not fitted, with the reason
  CurveFit chosen;
  BetaBinarySpec spec;  // the fitted generator
  // The joint likelihood of the scores and the labels under `spec`, for the comparison with
  // the dirichlet family (the labels at f == 1 add nothing: phi(1) = 1 there).
  double log_likelihood = 0.0;
  std::size_t free_parameters = 0;
  double aic = 0.0;
};

// Throws DomainError when the data are not binary, have a score f == 0 exactly (the family has
// no mass there), fewer than two rows with 0 < f < 1, or Beta shapes outside the family's
// [1e-2, 1e3].
BetaScoreFit fit_beta_scores(const Sample& data);

// One curve by maximum likelihood of the labels on the rows with 0 < f < 1. Throws DomainError
// when the fit runs away (a parameter beyond 1e3, or d outside [1e-3, 1e3]: the labels are
// nearly separable by f).
CurveFit fit_curve(const Sample& data, CurveKind kind);

// -sum_i log P(y_i | f_i) under `curve` over the rows with 0 < f < 1: fit_curve's objective
// (for standard errors by its curvature).
double curve_negative_log_likelihood(const Sample& data, const CalibrationCurve& curve);

// Both steps, the curve chosen by AIC among those that fit (or fixed by `curve`). Throws
// DomainError when no generator of the family can describe the data (the reasons above, a
// label 0 at f == 1, or no curve fitted).
BetaBinaryFit fit_beta_binary(const Sample& data, std::optional<CurveKind> curve = std::nullopt);

}  // namespace calbench
