#pragma once
// The finite-sample bias of one bin's |gap| under the binomial model of the bin, for the
// `bias_corrected` interval method (interval_methods.hpp, docs/intervals.md).
//
// A bin holds m rows with mean score s and k hits (mean outcome k/m); given the scores, the
// model takes k ~ Binomial(m, a), a the bin's true accuracy, so the bin's true gap is
// mu = s - a and its plug-in term |s - k/m| has the bias
//     beta(a) = E|s - K/m| - |s - a|,  K ~ Binomial(m, a),
// largest (about sd(k/m) sqrt(2/pi)) at mu = 0 and vanishing once |mu| is several sd of
// k/m. The bootstrap evaluates beta at the observed gap, whose size overstates |mu|, so it
// understates the bias near mu = 0, where the bias is largest; abs_gap_bias evaluates beta at
// the debiased magnitude instead: |mu~| = sqrt(max(0, d^2 - abar (1 - abar)/(m - 1))),
// d = s - abar, abar = k/m, from Kumar et al. 2019's unbiased estimate of mu^2
// (E[abar (1 - abar)] / (m - 1) = a (1 - a)/m = var(abar)), with the sign of d:
// a~ = clamp(s - sign(d) |mu~|, 0, 1). It errs the other way where |mu| is one to two sd of
// k/m: there |mu~| is clipped to 0 in a third of the bins, and beta is overstated
// (docs/intervals.md: the measured effect).
// A bin with m < 2 has no variance estimate and gets bias 0.
#include <cstddef>

namespace calbench {

// E|s - K/m| for K ~ Binomial(m, a), a in [0, 1] (exact sum over the binomial mass, from the
// mode outward until the terms fall below 1e-17 of the mode's).
double expected_abs_gap(std::size_t m, double a, double s);

// beta at the debiased gap, as above: m rows (a whole number), score and hit sums.
double abs_gap_bias(double m, double score_sum, double hits_sum);

}  // namespace calbench
