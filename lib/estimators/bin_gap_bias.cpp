#include "estimators/bin_gap_bias.hpp"

#include <algorithm>
#include <cmath>

namespace calbench {

double expected_abs_gap(std::size_t m, double a, double s) {
  if (m == 0) return 0.0;
  if (!(a > 0.0)) return std::abs(s);
  if (!(a < 1.0)) return std::abs(s - 1.0);
  const double md = static_cast<double>(m);
  const auto mode = std::min(m, static_cast<std::size_t>(std::floor((md + 1.0) * a)));
  // Probabilities relative to the mode's: only their ratios are needed, since the sum is
  // normalised below.
  const double odds = a / (1.0 - a);
  constexpr double negligible = 1e-17;
  double sum = 0.0, total = 0.0;
  double pk = 1.0;
  for (std::size_t k = mode;; ++k) {
    const double kd = static_cast<double>(k);
    sum += pk * std::abs(s - kd / md);
    total += pk;
    if (k == m || pk < negligible) break;
    pk *= (md - kd) / (kd + 1.0) * odds;
  }
  pk = 1.0;
  for (std::size_t k = mode; k > 0;) {
    const double kd = static_cast<double>(k);
    pk *= kd / (md - kd + 1.0) / odds;  // P(k - 1) / P(k)
    --k;
    sum += pk * std::abs(s - static_cast<double>(k) / md);
    total += pk;
    if (pk < negligible) break;
  }
  return sum / total;
}

double abs_gap_bias(double m, double score_sum, double hits_sum) {
  if (m < 2.0) return 0.0;
  const double s = score_sum / m, abar = hits_sum / m, d = s - abar;
  const double square = d * d - abar * (1.0 - abar) / (m - 1.0);
  const double mu = std::copysign(std::sqrt(std::max(0.0, square)), d);
  const double a = std::clamp(s - mu, 0.0, 1.0);
  const auto rows = static_cast<std::size_t>(std::llround(m));
  return expected_abs_gap(rows, a, s) - std::abs(s - a);
}

}  // namespace calbench
