#pragma once
// Fitting the classwise map of the `empirical` family (generators/classwise_map.hpp; docs/fit.md,
// "The classwise map"; issue #35), K >= 3, after the top-label curve s(t) is fitted and fixed:
//
// 1. Top deviations d_k: for each class k, the rows whose top class is k, the penalised binary
//    log-likelihood of 1{y = k} with offset s(t_i) and d_k a cubic B-spline in t on
//    `top_knots` knots at quantiles of every row's t (fit/penalised_logistic.hpp). One penalty
//    for every class, chosen with the identity (no deviations) by cross-validated likelihood
//    pooled over the classes: the strength is shared by the penalty, and a class with few rows
//    is pulled to the shared curve (d_k = 0) because its likelihood is weak against it.
// 2. The other classes: on the rows whose top label is wrong, the multinomial log-likelihood of
//    the label among the non-top classes, P(y = j | y != top, p) = softmax_{j != top}(log p_j +
//    a(u_j) + e_j(u_j)), u_j = logit p_j, with a shared spline a and per-class splines e_j on
//    `other_knots` knots at quantiles of the labels' u; penalty lambda_a |a|^2 + lambda_e
//    sum_j |e_j|^2 (e_j shrinks to the shared a, a to the identity), by L-BFGS (LBFGSpp) with
//    the analytic gradient. The candidates, in order, are: none; a alone; a with e at each of
//    `other_penalties`; the cross-validated likelihood chooses, ties to the earlier (simpler).
//
// Robustness (docs/fit.md step 3 carries over): every row's contribution to either score is
// bounded by 1 per coefficient whatever its probabilities ((g - y) B(t) and (pi_j - 1{y = j})
// B(u_j)), the splines are constant beyond their boundary knots (the 0.5 % and 99.5 %
// quantiles), and the penalties are chosen on held-out rows.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "generators/classwise_map.hpp"
#include "generators/logit_spline.hpp"

namespace calbench {

struct ClasswiseFitOptions {
  bool enabled = true;  // false: no classwise map (the top-label construction alone)
  std::size_t top_knots = 5;
  std::vector<double> top_penalties = {10.0, 1.0, 0.1};  // against the identity (none)
  std::size_t other_knots = 6;
  double shared_penalty = 0.1;                             // lambda_a
  std::vector<double> other_penalties = {10.0, 1.0, 0.1};  // lambda_e, each with a
};

// One candidate's cross-validated log-likelihood (summed over the held-out rows).
struct ClasswiseScore {
  std::string candidate;  // "none", "top 10", "shared", "shared + classes 1", ...
  double penalty = 0.0;   // the candidate's penalty (infinity for none; 0 for "shared")
  double cv_log_likelihood = 0.0;
};

struct ClasswiseFit {
  ClasswiseMap map;
  std::vector<ClasswiseScore> top_scores, other_scores;
  std::string top_choice = "none", other_choice = "none";
  std::size_t wrong_rows = 0;  // rows whose top label is wrong: the other classes' data
};

// The data of the classwise fit: t_i (top-label logit), the top class, log p (n x K, as the
// generator keeps them) and the labels, with the top-label curve already fitted; folds as
// (train, test) row lists. Deterministic for any thread count.
struct ClasswiseData {
  std::size_t classes = 0;
  std::span<const double> t, log_p;
  std::span<const std::size_t> top;
  std::span<const std::uint32_t> label;
  const LogitSpline* curve = nullptr;
  const std::vector<std::vector<std::size_t>>* train = nullptr;
  const std::vector<std::vector<std::size_t>>* test = nullptr;
};

ClasswiseFit fit_classwise(const ClasswiseData& data, const ClasswiseFitOptions& options);

}  // namespace calbench
