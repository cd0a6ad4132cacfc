#pragma once
// Isotonic regression of outcomes on scores by pool-adjacent-violators (Ayer et al. 1955): the
// non-decreasing step function closest in least squares, the in-sample fit that CORP's
// reliability curve (estimators/corp.hpp) and the isotonic recalibrator
// (recalibrators/isotonic.hpp) are built on. Tied scores are pooled into their mean outcome
// first (weighted by their count); a score less than `resolution` above the first score of the
// current group joins that group (scikit-learn's _make_unique uses 1e-15; 0 pools exact ties
// only). Equal adjacent block means are pooled too, as scikit-learn does.
#include <cstdint>
#include <span>
#include <vector>

#include "core/curve_point.hpp"

namespace calbench {

struct IsotonicFit {
  std::vector<double> x;       // distinct scores, increasing
  std::vector<double> y;       // fitted values, non-decreasing, one per x
  std::vector<double> weight;  // rows per distinct score
  std::vector<double> sum;     // sum of their outcomes
};

// `order`, when not empty, lists the rows by non-decreasing score and they are not sorted again
// (the fit is the same; tied rows' outcomes are added in its order instead of the rows' order).
IsotonicFit isotonic_fit(std::span<const double> scores, std::span<const double> outcomes,
                         double resolution, std::span<const std::uint32_t> order = {});

// The CORP reliability curve (Dimitriadis et al. 2021) of the fit with exact ties: one point per
// step of the PAV fit (a run of equal fitted values), lower/upper its lowest and highest score,
// score the mean score of its rows, frequency the fitted value, error the binomial standard
// error sqrt(f (1 - f) / count), count its rows and weight count / n.
std::vector<CurvePoint> isotonic_reliability(std::span<const double> scores,
                                             std::span<const double> outcomes);

}  // namespace calbench
