#include "core/multiple_testing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace calbench {

double two_sided_normal_p(double z) {
  return std::erfc(std::fabs(z) / std::sqrt(2.0));
}

std::vector<double> holm_adjusted(std::span<const double> p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Stable: ties keep their input order, so the result does not depend on the sort.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> out(m);
  double running = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    const double scaled = std::min(1.0, static_cast<double>(m - i) * p[order[i]]);
    running = std::max(running, scaled);
    out[order[i]] = running;
  }
  return out;
}

}  // namespace calbench
