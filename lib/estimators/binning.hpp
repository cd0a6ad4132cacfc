#pragma once
// Binning schemes of the binned calibration estimators, and the binned error of scores
// against outcomes that every binned estimator is built from (binning x scope x norm).
//
// Conventions (calbench's, stated in `calbench list` and docs/estimators.md):
// - equal_width: B bins over [0, 1] with edges e_i = i/B computed by division (so 0.3 is the
//   double nearest 3/10, not linspace's 0.30000000000000004). Bins are right-closed (e_i, e_i+1]
//   as in Guo et al. 2017; 0 goes to the first bin; values outside [0, 1] are clamped into the
//   first or last bin.
// - equal_mass: the sorted scores are split into B contiguous parts whose sizes differ by at
//   most one, the first n mod B parts one larger (numpy.array_split); B := n when B > n. The
//   edge between two parts is the midpoint of the last score of one and the first of the
//   next, bins right-closed: a run of tied scores that straddles a split goes wholly to the
//   lower bin, which may leave a bin empty. This is the partition of Kumar et al. 2019's
//   `calibration` package.
// - Empty bins contribute nothing (and are not counted by the max norm).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "estimators/convention.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

// The most bins a binned estimator or recalibrator takes. Each worker holds a few doubles per
// bin (per bin and class for the classwise ones), allocated for every evaluation: 1e9 bins
// exhausted the memory of a 23 GB machine before one replicate finished. A million bins is
// far more than any sample fills (B > n leaves bins empty) and costs 24 MB per class.
inline constexpr std::int64_t max_bins = 1'000'000;

enum class Binning { equal_width, equal_mass };
std::string_view to_string(Binning binning);  // "equal_width", "equal_mass": configs and results
// l1, l2, max: weighted by n_b/n as below. average: the unweighted mean of |gap_b| over
// non-empty bins (netcal's and kyle's "ACE", average calibration error). lp: (sum_b (n_b/n)
// |gap_b|^p)^(1/p) for any p >= 1 (Kumar et al. 2019's `calibration`, plugin_ce(power = p)).
enum class Norm { l1, l2, max, average, lp };

// The B + 1 equal-width edges i/B of the convention above.
void equal_width_edges(std::size_t bins, std::vector<double>& edges);
// The B + 1 equal-width edges of a library's rule (convention.hpp); with float32 each edge is
// computed in float arithmetic, as the library does in that precision.
void library_edges(EdgeRule rule, std::size_t bins, bool float32, std::vector<double>& edges);

// Bin index in [0, B) of a score under the equal-width convention, from the edges above.
// Inline: the binned estimators call it once per score (K times per row for classwise).
// The candidate floor(score B) comes from the product, which is within an ulp of the exact
// b + fraction, so it is off by at most one bin; the exact edges i/B then correct it, so a
// value on an edge lands in the bin below it whatever the rounding of score * B. The edges
// come from a table: two divisions per score would cost more than the rest of the binning. A
// signed truncating cast: the unsigned one and ceil (without SSE4.1) are slower sequences.
// `Branchless` picks how the correction is made, with the same result: branches are faster
// where the data predict them (top-label scores, whose consecutive rows share bins and so
// chain through the bin sums), arithmetic where they do not (classwise scores).
template <bool Branchless = false>
inline std::size_t equal_width_bin(double score, std::span<const double> edges) {
  const std::size_t bins = edges.size() - 1;
  if (!(score > 0.0)) return 0;  // 0, negatives (and NaN) go to the first bin
  if (score >= 1.0) return bins - 1;
  auto b = std::min(
      static_cast<std::size_t>(static_cast<std::int64_t>(score * static_cast<double>(bins))),
      bins - 1);
  if constexpr (Branchless) {
    b -= static_cast<std::size_t>(b > 0) & static_cast<std::size_t>(score <= edges[b]);
    b += static_cast<std::size_t>(b + 1 < bins) & static_cast<std::size_t>(score > edges[b + 1]);
  } else {
    while (b + 1 < bins && score > edges[b + 1]) ++b;
    while (b > 0 && score <= edges[b]) --b;
  }
  return b;
}
// The same, building the edges (for one-off use).
std::size_t equal_width_bin(double score, std::size_t bins);

// The same by table lookup, for the classwise loop (K scores a row, in bins nothing predicts).
// Cells of width 1/F, F = table.size() a power of two, so a score's cell floor(score F) is
// exact; a cell holding no edge has one bin for all its scores, found once and stored, and
// only the few cells holding an edge (kCellHoldsEdge) compare with the edges. 1.8x faster than
// equal_width_bin<true> in classwise_ece at W1 (F = 1024 for B = 15).
inline constexpr std::uint32_t kCellHoldsEdge = 0xFFFFFFFFu;
// The table for the B + 1 edges of equal_width_edges.
void equal_width_table(std::span<const double> edges, std::vector<std::uint32_t>& table);
inline std::size_t equal_width_bin(double score, std::span<const double> edges,
                                   std::span<const std::uint32_t> table) {
  // Scores <= 0 and NaN to cell 0, >= 1 to the last cell, without a branch.
  const double x = score > 0.0 ? std::min(score, 1.0) : 0.0;
  const auto cell = std::min(
      static_cast<std::size_t>(static_cast<std::int64_t>(x * static_cast<double>(table.size()))),
      table.size() - 1);
  const std::uint32_t bin = table[cell];
  return bin != kCellHoldsEdge ? bin : equal_width_bin<true>(score, edges);
}

// One non-empty bin's part of a norm, added to `out`: its gap |mean_b(o) - mean_b(s)| with
// weight w (n_b/n): l1 w gap, l2 w gap^2, lp w gap^power (l2 and lp unrooted); max keeps the
// largest gap; average adds the gap, to be divided by the non-empty bins at the end. Every
// binned error combines its bins through this one step (combine_bins_unrooted, BinnedEce).
inline void add_bin_gap(double& out, Norm norm, double w, double gap, double power) {
  switch (norm) {
    case Norm::l1:
      out += w * gap;
      break;
    case Norm::l2:
      out += w * gap * gap;
      break;
    case Norm::max:
      out = std::max(out, gap);
      break;
    case Norm::average:
      out += gap;
      break;
    case Norm::lp:
      out += w * std::pow(gap, power);
      break;
  }
}

// The per-bin sums of score - outcome and the bin counts of n rows combined by a norm: l1
// sum_b (n_b/n)|gap_b|, l2 the same of gap_b^2 *without* the square root (callers averaging
// squared errors over classes take it last), max, average (mean over non-empty bins).
// Empty bins contribute nothing.
// lp: sum_b (n_b/n) |gap_b|^power, unrooted as l2.
double combine_bins_unrooted(std::span<const double> sum_gap, std::span<const double> count,
                             double n, Norm norm, double power = 2.0);

// The binned calibration error of scores s_i against outcomes o_i in {0, 1}:
// l1:  sum_b (n_b/n) |mean_b(o) - mean_b(s)|
// l2:  sqrt(sum_b (n_b/n) (mean_b(o) - mean_b(s))^2)
// max: max over non-empty b of |mean_b(o) - mean_b(s)|
// Returns 0 for an empty sample. Reorders nothing in the inputs; uses the workspace.
double binned_calibration_error(std::span<const double> scores, std::span<const double> outcomes,
                                Binning binning, std::size_t bins, Norm norm,
                                EstimatorWorkspace& workspace);

// The number of bins of n scores under a library convention (estimators/convention.hpp): B,
// B + 1 when the convention gives scores >= 1 a bin of their own, min(B, n) for the
// split_midpoint equal-mass rule.
std::size_t number_of_bins(std::size_t n, Binning binning, std::size_t bins,
                           const Convention& convention);

// The scores binned under a library convention, reduced to each bin's count, sum of scores and
// sum of outcomes (workspace.bin_count, bin_score, bin_hits, each summed in row order); returns
// number_of_bins. Equal-width: O(n log B); equal-mass: calbench's counting pass (the
// order statistics and each score's bin from fine buckets) or, for rank_floor, an O(n) stable
// order.
std::size_t bin_statistics(std::span<const double> scores, std::span<const double> outcomes,
                           Binning binning, std::size_t bins, const Convention& convention,
                           EstimatorWorkspace& workspace);

// bin_statistics, and per bin the sum of (score - outcome)^2 (workspace.bin_gap_squares).
std::size_t bin_statistics_with_squares(std::span<const double> scores,
                                        std::span<const double> outcomes, Binning binning,
                                        std::size_t bins, const Convention& convention,
                                        EstimatorWorkspace& workspace);

// Row indices 0..n-1 in ascending order of score, ties in row order (the permutation of
// std::stable_sort by score; scores must not be NaN), into `order`, in O(n) expected time.
// Uses binning.cpp's own scratch of the workspace.
void stable_score_order(std::span<const double> scores, EstimatorWorkspace& workspace,
                        std::vector<std::uint32_t>& order);

}  // namespace calbench
