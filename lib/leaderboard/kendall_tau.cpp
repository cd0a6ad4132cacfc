#include "leaderboard/kendall_tau.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace calbench {

// O(n^2) over the pairs: the rankings here have tens of methods, where Knight's O(n log n)
// algorithm (scipy's) gains nothing and is harder to read.
double kendall_tau_b(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw DomainError("Kendall tau: the rankings differ in length");
  const std::size_t n = x.size();
  double concordant = 0, discordant = 0, tied_x = 0, tied_y = 0, pairs = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      ++pairs;
      // Signs by comparison, not by subtraction, so that infinite scores (a leaderboard's failed
      // methods) tie with each other and order against the finite ones.
      const int sx = (x[i] > x[j]) - (x[i] < x[j]), sy = (y[i] > y[j]) - (y[i] < y[j]);
      if (sx == 0) ++tied_x;
      if (sy == 0) ++tied_y;
      if (sx == 0 || sy == 0) continue;
      sx == sy ? ++concordant : ++discordant;
    }
  const double denominator = std::sqrt((pairs - tied_x) * (pairs - tied_y));
  if (denominator == 0) return std::numeric_limits<double>::quiet_NaN();
  return (concordant - discordant) / denominator;
}

}  // namespace calbench
