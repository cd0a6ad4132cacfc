#pragma once
// Isotonic regression of outcomes on scores by pool-adjacent-violators (Ayer et al. 1955): the
// non-decreasing step function closest in least squares, the in-sample fit that CORP's
// reliability curve (estimators/corp.hpp) and the isotonic recalibrator
// (recalibrators/isotonic.hpp) are built on. Tied scores are pooled into their mean outcome
// first (weighted by their count); a score less than `resolution` above the first score of the
// current group joins that group (scikit-learn's _make_unique uses 1e-15; 0 pools exact ties
// only). Equal adjacent block means are pooled too, as scikit-learn does.
#include <span>
#include <vector>

namespace calbench {

struct IsotonicFit {
  std::vector<double> x;       // distinct scores, increasing
  std::vector<double> y;       // fitted values, non-decreasing, one per x
  std::vector<double> weight;  // rows per distinct score
  std::vector<double> sum;     // sum of their outcomes
};

IsotonicFit isotonic_fit(std::span<const double> scores, std::span<const double> outcomes,
                         double resolution);

}  // namespace calbench
