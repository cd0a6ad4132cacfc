#pragma once
// The binned calibration-error family, one class composed of binning x scope x norm x
// convention (x debiasing):
// - `ece` (scope top): Guo et al. 2017, eq. 3; norm max is their MCE, norm average netcal's
//   and kyle's "ACE" (average calibration error).
// - `classwise_ece` (scope classwise): Kull et al. 2019's classwise ECE = Nixon et al. 2019's
//   SCE: (1/K) sum_k CE_k, CE_k the binned error of p_k against 1{y = k}. With a threshold
//   t > 0 only rows with p_k > t count for class k (weights n_kb / n_k over the n_k kept
//   rows), which with equal-mass bins is Nixon et al.'s TACE. norm l2: sqrt((1/K) sum CE_k^2).
// - `ace` (Nixon et al. 2019): classwise, equal-mass ranges, convention `nixon`.
// - scope binary (K = 2): scores p_1, outcomes 1{y = 1} (sklearn calibration_curve).
// - `ece_debiased` (Kumar et al. 2019): per bin (n_b/n)[(mean_b s - mean_b o)^2 -
//   mean_b o (1 - mean_b o)/(n_b - 1)], summed, an unbiased estimate of the squared binned L2
//   error; reports sqrt(max(0, .)) unless `squared`.
// Targets: see target(); conventions in estimators/convention.hpp and docs/conventions.md.
#include "estimators/binning.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

enum class Scope { top, classwise, binary };

struct BinnedEceSpec {
  std::size_t bins = 15;
  Binning binning = Binning::equal_width;
  Norm norm = Norm::l1;
  Scope scope = Scope::top;
  double threshold = 0.0;  // classwise: keep p_k > threshold (when > 0 or the convention drops 0)
  const Convention* convention = nullptr;  // nullptr: calbench
  bool debiased = false;                   // Kumar et al.'s debiased squared L2 (norm ignored)
  bool squared = false;                    // debiased: report the square, not its root
};

class BinnedEce final : public Estimator {
 public:
  explicit BinnedEce(BinnedEceSpec spec);  // bins >= 1, threshold in [0, 1)
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  bool converges_to_target() const override { return false; }
  std::optional<Quantity> target() const override;
  const BinnedEceSpec& spec() const { return spec_; }

 private:
  // The error of one scope's scores against their outcomes; for l2 and the debiased estimator
  // the square (the root is taken after averaging over classes).
  double scope_error(std::span<const double> scores, std::span<const double> outcomes,
                     EstimatorWorkspace& workspace) const;
  BinnedEceSpec spec_;
};

}  // namespace calbench
