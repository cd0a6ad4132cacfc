#pragma once
// Centred isotonic regression (Oron & Flournoy 2017) as a binary calibrator, as the cir-model
// package (CenteredIsotonicRegression, which probmetrics/CalArena use as "cir") builds it from
// an isotonic fit (recalibrators/isotonic.hpp, scikit-learn's conventions): every run of
// equal fitted values ("step") collapses to one point at the fit rows' mean score in it,
// except that a step at 0 or 1 keeps its first and last score, the first step also keeps its
// first score and the last step its last score (so the fitted range of scores is kept). The
// map interpolates linearly between those points and is clamped outside them, like isotonic.
// The result is strictly increasing between the centred points instead of flat.
#include "estimators/isotonic_fit.hpp"
#include "recalibrators/binary_calibrator.hpp"
#include "recalibrators/isotonic.hpp"

namespace calbench {

class CentredIsotonicCalibrator : public BinaryCalibrator {
 public:
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override { return "centred_isotonic"; }
  std::string map_kind() const override { return "isotonic"; }
};

// The centred points (x increasing, y non-decreasing) of an isotonic fit.
std::pair<std::vector<double>, std::vector<double>> centred_points(const IsotonicFit& fit);

}  // namespace calbench
