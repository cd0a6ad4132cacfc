#pragma once
// Ground truth of the `empirical` family (docs/truth.md, "The empirical family").
#include "generators/empirical.hpp"
#include "truth/ground_truth.hpp"
#include "truth/truth_settings.hpp"

namespace calbench {

// The family's population is the average over its n rows of the smoothed draw from each, so
// every expectation is (1/n) sum_i E[F(p) | row i]. Stratified Monte Carlo draws every row
// equally often (no between-row variance), in 8 batches on keyed streams; the value is the
// batches' mean and its error their standard error. With h = 0 a row has one p, one draw per
// row is the exact finite average, and the method is closed_form.
//   - plain expectations: accuracy, overconfidence, brier, nll, canonical_l1, canonical_l2
//     (c = r(p), a function of p);
//   - K >= 3: P(y = top | p) = g(z) depends on z only, so ece_top_l1 = E|g(Z) - Z| and
//     ece_top_l2 = sqrt(E (g(Z) - Z)^2) are plain expectations too; classwise_ece_l1 by the
//     engine's binned, Rao-Blackwellised Monte Carlo (family_monte_carlo);
//   - K >= 3 with per-class top deviations (generators/classwise_map.hpp): P(y = top | p)
//     depends on the top class as well as z, so ece_top_l1 and ece_top_l2 are binned like the
//     classwise error;
//   - K = 2: c_1 = g(p_1) is a function of p_1, so classwise_ece_l1 = E|g(p_1) - p_1| is plain;
//     the top-label ECEs condition on Z = max(p_1, 1 - p_1), which mixes p_1 = Z and 1 - Z:
//     binned Monte Carlo.
GroundTruth empirical_truth(const EmpiricalGenerator& generator, const TruthSettings& settings);

}  // namespace calbench
