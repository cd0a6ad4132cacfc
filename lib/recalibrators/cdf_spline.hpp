#pragma once
// Spline calibration of Gupta et al. 2021 ("Calibration of neural networks using splines",
// ICLR; kartikgupta-at-anu/spline-calibration, recalibrate.py and utilities/spline.py) as a
// binary calibrator, used on the top label as the authors do. On the fit scores s_(1) <= ...
// <= s_(n) (sorted) with outcomes o_(i):
//   x_i = (i - 1)/(n - 1),  h_i = (1/n) sum_{j <= i} (o_(j) - s_(j))
// (cumulative accuracy minus cumulative score, the Kolmogorov-Smirnov curve); a natural cubic
// spline with `knots` equally spaced knots on [0, 1] is fitted to (x_i, h_i) by least squares
// (the authors' parametrisation by knot values, second derivatives from the natural end
// conditions); the recalibrated score of s_(i) is g_i = h'(x_i) + s_(i), and g(s) interpolates
// linearly between the sorted fit scores, constant outside them, clipped to [0, 1]. Tied fit
// scores share the mean of their g_i. Two departures, docs/recalibration.md: the authors'
// interpolation weighs the two neighbours the wrong way round (beta y[ind] + alpha y[ind-1]
// with alpha = s - x[ind-1]); here it is linear. And ties are averaged (their lookup takes
// the first).
#include "recalibrators/binary_calibrator.hpp"

namespace calbench {

class CdfSplineCalibrator : public BinaryCalibrator {
 public:
  // knots >= 3 (the authors use 6).
  explicit CdfSplineCalibrator(std::size_t knots);
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override { return "cdf_spline"; }
  std::string map_kind() const override { return "cdf_spline"; }

 private:
  std::size_t knots_;
};

// The fitted map from its sorted distinct scores x and values y (any finite numbers; outputs
// are clipped to [0, 1]); recalibrators/restore_model.hpp.
std::unique_ptr<const BinaryMap> cdf_spline_map(std::vector<double> x, std::vector<double> y);

}  // namespace calbench
