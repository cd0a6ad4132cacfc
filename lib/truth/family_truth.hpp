#pragma once
// Ground truth of the families beyond `dirichlet` (docs/truth.md, docs/generators.md): exact
// where the family allows it (closed forms, one-dimensional quadrature), Rao-Blackwellised
// Monte Carlo with the engine's fine bins otherwise.
#include <span>

#include "generators/generator.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

// label_noise: every quantity exact for symmetric alpha (the argmax of p is then independent
// of Z, so E[c_top | Z] = (1 - w) Z + w/K); for other alpha ece_top_l1 and ece_top_l2 by
// Monte Carlo, the rest exact.
GroundTruth label_noise_truth(const LabelNoiseGenerator& generator, const TruthSettings& settings);

// class_conditional: K = 2 all nine by quadrature; K >= 3 accuracy, overconfidence, brier,
// nll and classwise_ece_l1 exact, ece_top_l1 and ece_top_l2 too for rows a_k 1 + (b_k - a_k) e_k
// (truth/dirichlet_max.hpp; Monte Carlo where that does not converge, and for other rows), the
// canonical errors by Monte Carlo.
GroundTruth class_conditional_truth(const ClassConditionalGenerator& generator,
                                    const TruthSettings& settings);

// beta_binary: all nine by one-dimensional quadrature; for `identity` and `polynomial` curves
// seven of them replaced by closed forms (beta_binary_closed_form).
GroundTruth beta_binary_truth(const BetaBinaryGenerator& generator);
// All nine by quadrature only (tests compare it with the closed forms).
GroundTruth beta_binary_quadrature(const BetaBinaryGenerator& generator);
// The closed forms of the polynomial curve phi(f) = f^d (identity: d = 1), with
// R(x) = B(a + x, b)/B(a, b) and I(x) = I_{1/2}(a + x, b): accuracy, overconfidence, brier,
// nll, classwise_ece_l1, canonical_l1, canonical_l2 (not the top-label ECEs). False for other
// curves.
bool beta_binary_closed_form(const BetaBinaryGenerator& generator, GroundTruth& out);

// The Monte Carlo estimate of every quantity for any family (no exact shortcuts, no control
// variates), for tests and for the quantities without an exact method. Streams are keyed by the
// generator's canonical text. Deterministic for any thread count. Draws stop once the errors of
// the `needed` quantities are within the tolerance (the others are estimated from the same
// draws, with their own errors; classwise_ece_l1 is unknown, NaN, when it is not needed).
GroundTruth family_monte_carlo(const Generator& generator, const TruthSettings& settings,
                               std::span<const Quantity> needed = all_quantities);

// P_alpha(argmax c = k) for c ~ Dirichlet(alpha + shift e_k): the one-dimensional integral
// int f_{alpha_k + shift}(x) prod_{j != k} P(alpha_j, x) dx (gamma density and regularised lower
// incomplete gamma). With shift 1 and 2 and size biasing it gives E[max c] and E[max c^2].
TruthValue argmax_probability(std::span<const double> alpha, std::size_t k, double shift = 0.0);

}  // namespace calbench
