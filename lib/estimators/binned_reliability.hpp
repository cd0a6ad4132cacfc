#pragma once
// The binned reliability curve of a sample: what a reliability diagram draws. Bins follow
// calbench's convention (estimators/binning.hpp), so sum_b weight_b |frequency_b - score_b| over
// the points is the `ece` (norm l1) of the same scores and bins.
#include <cstddef>
#include <span>
#include <vector>

#include "core/curve_point.hpp"
#include "estimators/binning.hpp"

namespace calbench {

// One point per non-empty bin: lower and upper the bin's edges (equal-width: i/B; equal-mass:
// the partition's edges, the outer ones the smallest and the largest score), score the
// mean score, frequency the mean outcome, error its binomial standard error
// sqrt(f (1 - f) / n_b), count n_b, weight n_b / n.
std::vector<CurvePoint> binned_reliability(std::span<const double> scores,
                                           std::span<const double> outcomes, Binning binning,
                                           std::size_t bins, EstimatorWorkspace& workspace);

}  // namespace calbench
