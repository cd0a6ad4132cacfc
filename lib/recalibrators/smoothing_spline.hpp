#pragma once
// Smoothing-spline calibration (Lucena 2018, "Spline-based probability calibration"; the
// splinecalib package's SplineCalib, which probmetrics/CalArena run as MLISplineCalibrator) as
// a binary calibrator: a logistic regression on a natural cubic spline basis of the log-odds of
// the score, with a ridge penalty chosen by held-out log loss. With the package's defaults:
//   - knots: the smallest and largest distinct fit score, 28 more distinct scores, and
//     0.1, 0.2, ..., 0.9 (all distinct scores when there are at most 30);
//   - a "unity prior": 135 synthetic rows (x, y = x) on a grid from 1e-8 to 1 - 1e-8 (19 log-
//     spaced points a side, 99 in [0.01, 0.99]; the 36 tail points weigh 1/18 each), scaled to
//     a total weight of 20 rows, pulling the map towards the identity where data are thin;
//   - scores clipped to [eps, 1 - eps] before the log-odds, eps = max(1e-16, min(1e-4,
//     2^(round(log2 m) - 1))), m the smallest x in (0, 1) over the rows, prior rows included
//     (the package means min(x, 1 - x) but computes min x);
//   - basis: 1, x, and the natural-spline functions d_k - d_{K-1} of Hastie et al. (ESL 5.4),
//     d_k(x) = ((x - xi_k)_+^3 - (x - xi_K)_+^3)/(xi_K - xi_k);
//   - objective: (1/N) sum_i w_i [-y_i log σ(η_i) - (1 - y_i) log(1 - σ(η_i))] + λ/d ||β||²
//     (N rows including the prior's, d coefficients), minimised by Newton's method from β = 0;
//   - λ: the value of logspace(-4, 4, 17) with the smallest held-out mean log loss (rounded to
//     4 decimals, the first on ties) on one stratified fifth of the data rows (the package's
//     "fast" mode; prior rows always train), or a fixed `lambda`.
// Departures from the package (docs/recalibration.md §2a): its 28 random knots (Python's
// random.shuffle, seed 42) are here 28 evenly spaced ranks among the interior distinct scores;
// its held-out fifth (numpy.random.seed(42) shuffles) comes here from a fixed calbench stream;
// and the final fit uses every row, where the package refits on the four training fifths only.
#include <optional>

#include "recalibrators/binary_calibrator.hpp"

namespace calbench {

class SmoothingSplineCalibrator : public BinaryCalibrator {
 public:
  // lambda: nullopt chooses it by held-out log loss; a given one must be >= 0 and finite.
  explicit SmoothingSplineCalibrator(std::optional<double> lambda);
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override { return "smoothing_spline"; }
  std::string map_kind() const override { return "smoothing_spline"; }

 private:
  std::optional<double> lambda_;
};

// The knots (probability scale) chosen for these scores; throws DomainError with fewer than 3
// distinct scores.
std::vector<double> smoothing_spline_knots(std::span<const double> scores, const std::string& what);

// Rows of the natural cubic spline basis at x (log-odds) for the knots (log-odds, increasing).
std::vector<double> natural_spline_basis(double x, std::span<const double> knots);

// The fitted map from eps, the knots (log-odds) and the coefficients; restore_model.hpp.
std::unique_ptr<const BinaryMap> smoothing_spline_map(double eps, std::vector<double> knots,
                                                      std::vector<double> coefficients,
                                                      double lambda);

}  // namespace calbench
