#pragma once
// `ece`: the top-label binned calibration error (Guo et al. 2017, eq. 3 for l1; norm `max` is
// their MCE). Scores are the confidences max_k p_k, outcomes 1{argmax p = y}.
// Targets: l1 -> ece_top_l1, l2 -> ece_top_l2; max has no population target among the
// design's quantities.
#include "estimators/binning.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

struct BinnedEceSpec {
  std::size_t bins = 15;
  Binning binning = Binning::equal_width;
  Norm norm = Norm::l1;
};

class BinnedEce final : public Estimator {
 public:
  explicit BinnedEce(BinnedEceSpec spec);  // bins >= 1
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  bool converges_to_target() const override { return false; }
  std::optional<Quantity> target() const override;
  const BinnedEceSpec& spec() const { return spec_; }

 private:
  BinnedEceSpec spec_;
};

}  // namespace calbench
