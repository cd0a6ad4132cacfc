#pragma once
// Binning conventions of the common calibration libraries, as data: each library's ECE is
// calbench's binned error with a different set of choices below, not a copy of its code.
// Sources (file:line at the commits of ../shared/reference/peers.json) are in
// docs/conventions.md and ../shared/reference/CONVENTIONS.md.
#include <cstddef>
#include <string_view>
#include <vector>

namespace calbench {

// How the B + 1 equal-width edges are computed (they differ in the last bit: 3/10 is
// 0.3 by division but 0.30000000000000004 by numpy's linspace, 3 * (1/10)).
enum class EdgeRule {
  division,        // e_i = i / B (calbench, Kumar et al.'s `calibration`)
  linspace,        // e_i = i * (1 / B), e_B = 1 (numpy.linspace: sklearn, kyle, netcal, rm)
  torch_linspace,  // ATen's symmetric linspace: i < (B+1)/2 ? i*step : 1 - (B-i)*step
  stretched,       // numpy.linspace(0, 1 + 1e-8, B + 1) (PyCalib classwise/binary ECE)
  truncation,      // bin = int(s / (1/B)) (relplot binnedECE); no edge table
  floor_product,   // bin = min(B - 1, floor(B s)) of the rounded product, s <= 0 in bin 0
                   // (tf.histogram_fixed_width_bins: uncertainty-metrics, robustness_metrics'
                   // TF metrics, TensorFlow Probability); no edge table
  zero_bin,        // numpy.digitize(s, linspace(0, 1, B), right=True) (MAPIE): scores <= 0 in
                   // bin 0 of their own, then B - 1 right-closed bins of width 1/(B - 1)
};

// Which side of a bin is closed, for scores on an edge.
enum class Closed { right, left };

// How equal-mass bins are built.
enum class MassRule {
  split_midpoint,  // numpy.array_split of the sorted scores, edges at midpoints (Kumar)
  quantile,        // numpy.quantile(s, linspace(0, 1, B + 1)), linear interpolation
  nixon,           // sort(s)[round_half_even(linspace(0, n, B, endpoint=False))] (Nixon/rm)
  rank_floor,      // the row of rank r (stable sort) in bin min(B - 1, floor((r / n) * B)):
                   // caltrain's BinEqualExamples; ties may split across bins
  nearest_rank,    // edges e_j = sort(s)[round_half_even((n - 1) j / B)], j = 0..B (TFP's
                   // quantiles, interpolation 'nearest'); bin = #{j : e_j <= s} - 1, clamped to
                   // B - 1 (tfp.stats.expected_calibration_error_quantiles)
  percentile_digitize,  // MAPIE "quantile": B edges e_j = numpy.percentile(s, 100 j/(B-1)),
                        // bin = #{j : e_j < s} (numpy.digitize right=True): the minimum alone
                        // with its ties in bin 0, then (e_j-1, e_j]
};

// One library's choices. The table (convention.cpp) names every field it sets; a rule left
// out is off.
struct Convention {
  std::string_view name;
  std::size_t default_bins;  // the library's default number of bins
  EdgeRule edges;            // equal-width edges
  Closed closed;             // equal-width closed side
  MassRule mass;             // equal-mass partition
  Closed mass_closed;        // equal-mass closed side
  // Equal-mass first/last edge forced to 0 and 1 (netcal).
  bool mass_outer_edges_01 = false;
  // Scores >= 1 go to an extra bin B (torchmetrics, rm, relplot).
  bool own_bin_for_one = false;
  // Scores and edges in float32 (torchmetrics multiclass).
  bool float32 = false;
  // Classwise: keep only p_k > threshold, strictly, even at 0 (rm).
  bool drop_zero_scores = false;
  // Equal-mass classwise: (1/R) sum_r |gap_r| over R = B ranges, empty ones 0 (Nixon et al.'s
  // printed formula), not n_r / n.
  bool unweighted_ranges = false;
  // Debiased: a singleton bin keeps its biased term (torchmetrics).
  bool debias_keep_singleton = false;
  // Reproduced against reference values in tests/unit/test_binned.cpp.
  bool verified = false;
};

// calbench's own convention: division edges, right-closed (Guo et al. 2017), 0 in the first
// bin, 1 in the last; equal-mass by Kumar's split; every row counts; singleton bins drop out
// of the debiased estimator.
const Convention& calbench_convention();

// All conventions, calbench first; lookup by name (nullptr when unknown).
const std::vector<Convention>& conventions();
const Convention* find_convention(std::string_view name);

}  // namespace calbench
