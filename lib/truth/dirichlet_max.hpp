#pragma once
// The law of the largest component of a Dirichlet vector, and through it the exact top-label
// calibration errors of class_conditional generators whose rows are a 1 + (b - a) e_k
// (docs/truth.md, "class_conditional").
#include <cstddef>
#include <optional>
#include <span>

#include "truth/ground_truth.hpp"

namespace calbench {

// `count` components of a Dirichlet parameter vector equal to `alpha`.
struct ConcentrationGroup {
  double alpha = 1.0;
  std::size_t count = 1;
};

// P(max_j p_j <= u) for p ~ Dirichlet(groups), by a one-dimensional Fourier inversion that is
// exact up to rounding (dirichlet_max.cpp). std::nullopt where it does not converge within its
// budget: few components with small alpha, whose sum has too rough a density, or tilts beyond
// the range where the moment functions are computed accurately. The caller falls back to Monte
// Carlo then.
std::optional<double> dirichlet_max_cdf(std::span<const ConcentrationGroup> groups, double u);

// The same, always by the Fourier inversion (where u >= 1/2 or the Beta tails sum to under 1e-8,
// dirichlet_max_cdf uses them instead, exactly); exposed so tests can compare the two.
std::optional<double> dirichlet_max_cdf_fourier(std::span<const ConcentrationGroup> groups,
                                                double u);

// One row of a class_conditional generator of the one-off form: p | y = k ~ Dirichlet(a 1 +
// (b - a) e_k), with prior weight `weight` (rows with equal (a, b) may be merged, weights added).
struct OneOffRow {
  double weight = 1.0;
  double a = 1.0;  // every class but the row's own
  double b = 1.0;  // the row's own class
};

// The top-label truths of such a generator with K classes: ece_top_l1 = int |F_own - z F| dz
// and mean_square_gap = ece_top_l2^2 = int (F_own - z F)^2 / F dz over the confidence z = max p,
// where F is Z's density and F_own(z) dz = P(y = argmax p, Z in dz); plus the three integrals
// the engine also knows exactly (mass 1, accuracy and E[Z]) as checks. std::nullopt where a CDF
// did not converge.
struct TopLabelIntegrals {
  TruthValue ece_top_l1, mean_square_gap;
  double mass = 0.0, accuracy = 0.0, mean_confidence = 0.0;
};
std::optional<TopLabelIntegrals> one_off_top_label(std::size_t classes,
                                                   std::span<const OneOffRow> rows);

// The top label's calibration function P(y = argmax p | max p = z) = F_own(z)/F(z) of such a
// generator; std::nullopt where a CDF does not converge or F(z) = 0.
std::optional<double> one_off_top_calibration(std::size_t classes, std::span<const OneOffRow> rows,
                                              double z);

}  // namespace calbench
