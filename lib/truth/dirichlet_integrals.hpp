#pragma once
// Exact (closed-form or one-dimensional quadrature) population values for c ~ Dirichlet(alpha).
#include <span>
#include <vector>

#include "generators/dirichlet.hpp"
#include "truth/ground_truth.hpp"

namespace calbench {

// E[sum_k c_k^2] = sum_k alpha_k (alpha_k + 1) / (alpha_0 (alpha_0 + 1)).
double expected_sum_squares(std::span<const double> alpha);

// E[sum_k c_k log c_k] = sum_k (alpha_k/alpha_0)(psi(alpha_k + 1) - psi(alpha_0 + 1)).
double expected_neg_entropy(std::span<const double> alpha);

// E[max_k c_k]. With c = G/S for independent G_k ~ Gamma(alpha_k) and size biasing
// (c_k Dir(alpha) = (alpha_k/alpha_0) Dir(alpha + e_k)):
//   E[max c] = sum_k (alpha_k/alpha_0) P_{alpha + e_k}(argmax = k)
//            = sum_k (alpha_k/alpha_0) int_0^inf f_{alpha_k + 1}(x) prod_{j != k} P(alpha_j, x) dx,
// f the gamma density and P the regularised lower incomplete gamma function (Boost.Math).
// Classes with equal alpha share one integral. Returns the value and the integrator's error.
TruthValue expected_max(std::span<const double> alpha);

// The truth of the `identity` map: every calibration error is 0; brier and nll in closed form,
// accuracy = E[max c] by quadrature.
GroundTruth identity_truth(std::span<const double> alpha);

// All nine quantities for K = 2 by one-dimensional quadrature over c_1 ~ Beta(alpha_1, alpha_2),
// for maps that are injective and symmetric between the two classes (identity, temperature,
// top_label, power with equal exponents) and symmetric alpha. Returns false when not applicable.
bool binary_truth_by_quadrature(const DirichletGenerator& generator, GroundTruth& out);

}  // namespace calbench
