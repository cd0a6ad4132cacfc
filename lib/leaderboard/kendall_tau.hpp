#pragma once
// Kendall's tau-b between two rankings given as scores (Kendall 1945, "The treatment of ties in
// ranking problems", Biometrika 33(3)): (concordant - discordant) /
// sqrt((n0 - n1)(n0 - n2)), n0 = n(n - 1)/2 pairs, n1 and n2 the pairs tied in x and in y.
// scipy.stats.kendalltau's default (variant 'b'). NaN when either ranking is all ties.
#include <span>

namespace calbench {

double kendall_tau_b(std::span<const double> x, std::span<const double> y);

}  // namespace calbench
