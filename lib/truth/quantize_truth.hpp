#pragma once
// The truth of a `dirichlet` generator with the `quantize` map (docs/truth.md, "quantize").
//
// The map keeps the argmax and reports the level l_j of the cell of m = max c, so the top-label
// quantities are sums over the cells of P_j = P(m in cell j) and E_j = E[m 1{m in cell j}]:
//   accuracy = E[m], E[Z] = sum_j l_j P_j, ece_top_l1 = sum_j |E_j - l_j P_j|,
//   ece_top_l2^2 = sum_j (E_j - l_j P_j)^2 / P_j.
// K = 2: m is c_k on the event {c_k > 1/2}, and c_k ~ Beta(alpha_k, alpha_0 - alpha_k), so every
// quantity is a sum of regularised incomplete beta functions (size biasing: E[c_k 1{c_k <= b}]
// = (alpha_k/alpha_0) I_b(alpha_k + 1, alpha_0 - alpha_k)), all nine in closed form.
// K >= 3: above 1/2 the same (at most one component exceeds 1/2); below it P(m <= b) is
// dirichlet_max_cdf (exact to rounding) and E[m 1{m <= b}] = b F(b) - int_(1/K)^b F(x) dx by
// parts, F integrated by adaptive Gauss-Kronrod between the cell ends and F's kinks at 1/j.
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "generators/dirichlet.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

// One cell of the quantize map for the top component m.
struct QuantizeCellMoments {
  double level = 0.0;
  double probability = 0.0;   // P_j = P(m in cell)
  double first_moment = 0.0;  // E_j = E[m 1{m in cell}]
};

// The cells' moments for c ~ Dirichlet(alpha) (alpha one per class) and their total error
// (the quadrature's estimate; 0 at K = 2). std::nullopt where a CDF of the maximum does not
// converge (few classes with small alpha, truth/dirichlet_max.hpp) or the two routes to
// E[m 1{m <= 1/2}] disagree by more than 1e-9.
struct QuantizeMoments {
  std::vector<QuantizeCellMoments> cells;
  double error = 0.0;
};
std::optional<QuantizeMoments> quantize_moments(std::span<const double> alpha, std::size_t levels);

// The nine quantities. K = 2: all closed form. K >= 3: accuracy, overconfidence, ece_top_l1 and
// ece_top_l2 by the moments (quadrature), brier, nll, classwise_ece_l1 and the canonical errors
// by the engine's Rao-Blackwellised Monte Carlo, r(p) from the truncated Beta posterior of m
// over its segment of preimages (MapPreimages::quantize_posterior). Where the moments are
// unavailable the top-label quantities come from the Monte Carlo too (accuracy stays exact).
GroundTruth quantize_truth(const DirichletGenerator& generator, const TruthSettings& settings,
                           std::span<const Quantity> needed);

}  // namespace calbench
