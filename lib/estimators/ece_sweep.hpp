#pragma once
// `ece_sweep`: Roelofs et al. 2022 ("Mitigating bias in calibration error estimation"), the
// top-label binned ECE at the largest number of bins b* for which the bin accuracies are
// monotone (non-decreasing in the confidence, empty bins skipped).
// Bins as in the authors' code (google-research/caltrain, calibration_metrics.py and
// bin_methods.py): the confidences sorted stably, the row of rank r in equal_mass bin
// min(b - 1, floor((r / n) * b)) (ties may split across bins), or in equal_width bin
// min(b - 1, floor(s * b)), i.e. [j/b, (j+1)/b) with 1.0 in the last.
// Search: one sort (O(n log n)) with prefix sums of confidence and correctness, so the bins of
// any b cost O(b) (equal_mass) or O(min(b log n, n)) (equal_width: binary search for the
// boundaries, or one pass over the rows when b > n / log2 n). b = 2, 3, ..., n - 1
// is scanned upward, as in caltrain, and stops at the first b that is not monotone; b* = b - 1
// (1 when b = 2 already fails, or when n <= 2), and b* = n - 1 when no b fails. There is no cap:
// the scan costs O(b*^2) (equal mass) or O(b* min(b* log n, n)) (equal width), small wherever
// the accuracies are noisy (b* is then far below n: 7-12 on W1, at most about 200 at n = 200),
// and O(n^2) on nearly separable data (docs/estimators/binned.md gives the figures). One shortcut,
// exact: when the correctness of the rows in sorted order is non-decreasing (all wrong rows before
// all correct ones, e.g. every row correct), every b passes, because any partition of that order
// into consecutive runs has non-decreasing run means; b* = n - 1 is then reported without a scan.
// Targets: ece_top_l1 (norm l1), ece_top_l2 (norm l2).
#include "estimators/binning.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

struct EceSweepSpec {
  Binning binning = Binning::equal_mass;
  Norm norm = Norm::l1;  // l1 or l2
};

class EceSweep final : public Estimator {
 public:
  explicit EceSweep(EceSweepSpec spec);
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override;
  bool vanishes_when_calibrated() const override { return true; }
  // The b* of the last estimate() on this workspace's sample (tests, docs).
  static std::size_t last_bins(EstimatorWorkspace& workspace);

 private:
  EceSweepSpec spec_;
};

}  // namespace calbench
