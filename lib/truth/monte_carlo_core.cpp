#include "truth/monte_carlo_core.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace calbench::mc {

GroundTruth summarise(const std::vector<const GroupResult*>& samplers, std::span<const double> mu,
                      const SummaryShape& shape) {
  const std::size_t K = shape.classes;
  const bool pooled = shape.pooled;
  Moments M(mu.size());
  for (const auto* s : samplers) M.merge(s->moments);  // fixed order
  const double N = M.n;
  GroundTruth t;
  t[Quantity::accuracy] = controlled_mean(M, t_acc, mu);
  TruthValue gap = controlled_mean(M, t_gap, mu);
  t[Quantity::overconfidence] = {-gap.value, TruthMethod::monte_carlo, gap.error};
  t[Quantity::brier] = controlled_mean(M, t_brier, mu);
  t[Quantity::nll] = controlled_mean(M, t_nll, mu);
  t[Quantity::canonical_l1] = controlled_mean(M, t_can_l1, mu);
  TruthValue l2sq = controlled_mean(M, t_can_l2sq, mu);
  const double l2 = std::sqrt(std::max(l2sq.value, 0.0));
  t[Quantity::canonical_l2] = {l2, TruthMethod::monte_carlo,
                               l2 > 0.0 ? l2sq.error / (2.0 * l2) : std::sqrt(l2sq.error)};

  // Top-label calibration error.
  const BinSums top_all = merge_bins(samplers, &GroupResult::top, -1);
  const BinSums top_a = merge_bins(samplers, &GroupResult::top, 0);
  const BinSums top_b = merge_bins(samplers, &GroupResult::top, 1);
  if (shape.sign_constant_top) {
    t[Quantity::ece_top_l1] = {std::abs(gap.value), TruthMethod::monte_carlo, gap.error};
  } else {
    t[Quantity::ece_top_l1] = abs_value(top_all, top_a, top_b, 1, N);
  }
  if (shape.z_determines_gap) {
    // Z = g(max c) and c_top = max c: the gap is a function of Z, E[gap | Z] = gap.
    TruthValue sq = controlled_mean(M, t_gap_sq, mu);
    const double v = std::sqrt(std::max(sq.value, 0.0));
    t[Quantity::ece_top_l2] = {v, TruthMethod::monte_carlo,
                               v > 0.0 ? sq.error / (2.0 * v) : std::sqrt(sq.error)};
  } else {
    const auto fine = squared_conditional(top_all, 1, N);
    const auto coarse = squared_conditional(top_all, 2, N);
    const double v = std::sqrt(std::max(fine.value, 0.0));
    const double se = std::sqrt(fine.variance_if / N);
    // Binning bias shrinks with the square of the bin width: the fine partition's is about a
    // third of the difference to the partition with bins twice as wide.
    const double binning = std::abs(fine.value - coarse.value) / 3.0;
    const double err_sq = se + binning;
    t[Quantity::ece_top_l2] = {v, TruthMethod::monte_carlo,
                               v > 0.0 ? err_sq / (2.0 * v) : std::sqrt(err_sq)};
  }

  if (!shape.classwise) {
    t[Quantity::classwise_ece_l1] = {std::numeric_limits<double>::quiet_NaN(),
                                     TruthMethod::monte_carlo,
                                     std::numeric_limits<double>::infinity()};
    return t;
  }
  const BinSums cw_all = merge_bins(samplers, &GroupResult::classwise, -1);
  const BinSums cw_a = merge_bins(samplers, &GroupResult::classwise, 0);
  const BinSums cw_b = merge_bins(samplers, &GroupResult::classwise, 1);
  if (pooled) {
    // One channel holding all K classes: N K values, averaged = the mean over classes.
    TruthValue v = abs_value(cw_all, cw_a, cw_b, 1, N * static_cast<double>(K));
    t[Quantity::classwise_ece_l1] = v;
  } else {
    t[Quantity::classwise_ece_l1] = abs_value(cw_all, cw_a, cw_b, K, N);
  }
  return t;
}

}  // namespace calbench::mc
