#include "recalibrators/score_bins.hpp"

#include <algorithm>

namespace calbench {

std::vector<double> interior_edges(std::span<const double> scores, std::size_t bins,
                                   ScoreBinning binning) {
  std::vector<double> edges;
  if (binning == ScoreBinning::equal_width) {
    for (std::size_t i = 1; i < bins; ++i)
      edges.push_back(static_cast<double>(i) / static_cast<double>(bins));
    return edges;
  }
  std::vector<double> sorted(scores.begin(), scores.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const std::size_t B = std::min(bins, n);
  if (B <= 1) return edges;
  const std::size_t base = n / B, extra = n % B;
  std::size_t end = 0;
  for (std::size_t b = 0; b + 1 < B; ++b) {
    end += base + (b < extra ? 1 : 0);
    edges.push_back(0.5 * (sorted[end - 1] + sorted[end]));
  }
  return edges;
}

}  // namespace calbench
