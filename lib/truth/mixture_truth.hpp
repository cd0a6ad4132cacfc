#pragma once
// Ground truth of the `dirichlet_mixture` family (docs/generators.md, docs/truth.md).
#include "generators/dirichlet_mixture.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

// The quantities that are expectations of a function of (c, p) are linear in the law, so they
// are the weighted sums of the components' dirichlet truths, with the components' methods:
// accuracy, overconfidence (E[Z] - accuracy), brier, nll and, since the accepted maps are
// injective (r(p) = c), canonical_l1 = E|c - p|_1 and canonical_l2 = (sum_j w_j l2_j^2)^(1/2).
// The components are asked for these six only (compute_truth with `needed`: their Monte Carlo,
// at K >= 4, stops on these and keeps no per-class bins; K = 3 quadrature skips its classwise
// passes), once per distinct alpha. Errors: bounds (closed form, quadrature) add with the
// weights, Monte Carlo standard errors of distinct components (independent streams) in
// quadrature.
// The binned ones are not linear (the conditional gap given Z mixes the components): the
// identity map gives 0 exactly (r(p) = p); a temperature map's gap has one sign for every c
// (T < 1: p_top >= c_top pointwise, since sum_k c_k^(1/T) <= c_top^(1/T - 1)), so
// ece_top_l1 = |overconfidence| exactly; the others by the shared Monte Carlo sampler on the
// mixture itself (family_monte_carlo: keyed streams, the same stopping rule), drawn until those
// binned quantities (not all nine) are within the tolerance.
GroundTruth dirichlet_mixture_truth(const DirichletMixtureGenerator& generator,
                                    const TruthSettings& settings);

}  // namespace calbench
