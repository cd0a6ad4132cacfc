#pragma once
// Bins on the score axis for the binning calibrators (histogram_binning, bbq,
// scaling_binning), with the conventions of the binned estimators (estimators/binning.hpp):
// equal_width edges i/B; equal_mass: the sorted scores split into B parts whose sizes differ
// by at most one (numpy.array_split), each interior edge the midpoint of the last score of one
// part and the first of the next (Kumar et al. 2019's `calibration` package), B := n when
// B > n. Bins are right-closed (e_i, e_i+1]; the first and last reach 0 and 1.
#include <cstddef>
#include <span>
#include <vector>

namespace calbench {

enum class ScoreBinning { equal_width, equal_mass };

// The B - 1 interior edges, increasing (ties between parts can repeat an edge).
std::vector<double> interior_edges(std::span<const double> scores, std::size_t bins,
                                   ScoreBinning binning);

// The bin of a score: the number of interior edges strictly below it.
inline std::size_t bin_of(double score, std::span<const double> edges) {
  std::size_t lo = 0, hi = edges.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (edges[mid] < score)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace calbench
