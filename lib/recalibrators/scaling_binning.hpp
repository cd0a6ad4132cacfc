#pragma once
// The scaling-binning calibrator (Kumar, Liang & Ma 2019) as a binary calibrator, used on the
// top label (registry `scaling_binning`): (1) a scaling map g is fitted (Platt scaling with
// smoothed targets on the logit of the score, recalibrators/logistic_calibration.hpp, so that
// an all-correct fit sample does not make it fail); (2) the values g(s_i) of the fit rows are
// cut into B equal-mass bins; (3) a score maps to the mean of g(s_i) over the fit rows in the
// bin of g(s). As in the authors' `calibration` package (PlattBinnerTopCalibrator), the same
// fit sample serves all three steps (the paper splits it; docs/recalibration.md).
#include "recalibrators/binary_calibrator.hpp"

namespace calbench {

class ScalingBinning : public BinaryCalibrator {
 public:
  // Throws DomainError unless bins >= 1.
  explicit ScalingBinning(std::size_t bins);
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override { return "scaling_binning"; }
  std::string map_kind() const override { return "scaling_binning"; }

 private:
  std::size_t bins_;
};

// The fitted map: the Platt scaler, then the step map of its output (edges, values);
// recalibrators/restore_model.hpp.
std::unique_ptr<const BinaryMap> scaling_binning_map(std::unique_ptr<const BinaryMap> scaler,
                                                     std::vector<double> edges,
                                                     std::vector<double> values);

}  // namespace calbench
