#pragma once
// z-tests and Holm's step-down correction, for `calbench check` (docs/check.md).
#include <span>
#include <vector>

namespace calbench {

// Two-sided p-value of a standard normal statistic z: P(|Z| >= |z|) = erfc(|z| / sqrt 2).
double two_sided_normal_p(double z);

// Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
// 6(2): with the m p-values sorted p_(1) <= ... <= p_(m), the adjusted p_(i) is
// max_{j <= i} min(1, (m - j + 1) p_(j)); rejecting where adjusted <= alpha keeps the
// family-wise error rate at alpha under any dependence. Returned in the input's order.
std::vector<double> holm_adjusted(std::span<const double> p);

}  // namespace calbench
