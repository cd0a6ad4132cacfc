#pragma once
// Isotonic regression (pool-adjacent-violators) as a binary calibrator, used one-vs-rest
// (Zadrozny & Elkan 2002). scikit-learn's conventions, reproduced to rounding
// (tests/unit/test_recalibrators.cpp against ../shared/reference/isotonic): tied scores (and scores
// within 1e-15 of the first of their group, scikit-learn's float64 resolution) are pooled
// into their mean outcome first (weighted by their count), PAV fits a non-decreasing step
// sequence on the distinct scores, and a score is mapped by linear interpolation between the
// distinct fitted scores, clamped to the end values outside the fitted range
// (out_of_bounds = "clip").
#include "recalibrators/binary_calibrator.hpp"

namespace calbench {

class IsotonicCalibrator : public BinaryCalibrator {
 public:
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override { return "isotonic"; }
  std::string map_kind() const override { return "isotonic"; }
};

// The fitted map, rebuilt from its distinct scores x (increasing) and fitted values y
// (non-decreasing, as long as x): recalibrators/restore_model.hpp.
std::unique_ptr<const BinaryMap> isotonic_map(std::vector<double> x, std::vector<double> y);

}  // namespace calbench
