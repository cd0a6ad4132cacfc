#include "estimators/binned_reliability.hpp"

#include <algorithm>
#include <cmath>

#include "estimators/convention.hpp"

namespace calbench {

std::vector<CurvePoint> binned_reliability(std::span<const double> scores,
                                           std::span<const double> outcomes, Binning binning,
                                           std::size_t bins, EstimatorWorkspace& ws) {
  std::vector<CurvePoint> out;
  const std::size_t nb = bin_statistics(scores, outcomes, binning, bins, calbench_convention(), ws);
  if (scores.empty()) return out;
  // The bins' edges: i/B, or the equal-mass partition's inner edges, which bin_statistics
  // leaves in ws.edges (nb - 1 of them), between the smallest and the largest score.
  std::vector<double> edges;
  if (binning == Binning::equal_width) {
    equal_width_edges(nb, edges);
  } else {
    const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    edges.push_back(*lo);
    edges.insert(edges.end(), ws.edges.begin(), ws.edges.begin() + static_cast<long>(nb - 1));
    edges.push_back(*hi);
  }
  const double n = static_cast<double>(scores.size());
  for (std::size_t b = 0; b < nb; ++b) {
    const double count = ws.bin_count[b];
    if (count == 0.0) continue;
    CurvePoint p;
    p.lower = edges[b];
    p.upper = edges[b + 1];
    p.score = ws.bin_score[b] / count;
    p.frequency = ws.bin_hits[b] / count;
    p.error = std::sqrt(p.frequency * (1.0 - p.frequency) / count);
    p.count = static_cast<std::uint64_t>(count);
    p.weight = count / n;
    out.push_back(p);
  }
  return out;
}

}  // namespace calbench
