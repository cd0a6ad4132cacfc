#pragma once
// `kde_ece`: the kernel-density top-label ECE of Zhang, Kailkhura & Han 2020 ("Mix-n-Match:
// ensemble and compositional methods for uncertainty calibration in deep learning"), as their
// `ece_kde_binary` (zhang64-llnl/Mix-n-Match-Calibration, util_calibration.py) computes it:
//   c_i = max_k p_ik (clipped to [1e-256, 1 - 1e-256]), o_i = 1{argmax p_i = y_i};
//   kernel: triweight with standard deviation h, K_h(u) = (35/32)(1 - (u/3h)^2)^3 / (3h) on
//   |u| < 3h (KDEpy's `triweight`, whose bw is the standard deviation);
//   bandwidth h = std(c_i : o_i = 1) * (2n)^(-1/5)  (numpy's population std, n all rows);
//   boundary: reflection — points below 1/2 are mirrored at 0, the others at 1, the KDE of the
//   2m points is doubled and set to 0 outside (0, 1) (their `mirror_1d`);
//   f_1 = that KDE of the correct rows' confidences, f = that KDE of all confidences;
//   on the grid x_j = -0.6 + 2.2 j / (2^14 - 1): acc(x) = min(mean(o) f_1(x) / f(x), 1)
//   where max(f_1, f) > 1e-6 (elsewhere the integrand repeats its previous value, as theirs);
//   ECE = trapz_{0<=x<=1} |x - acc(x)| f(x) / trapz_{0<=x<=1} f(x).
// Like KDEpy's FFTKDE, the data are linearly binned onto the grid and the binned masses are
// convolved with the kernel sampled on the grid by FFT (core/fft_convolution.hpp), for the
// ~7450 output nodes in [0, 1] from the grid window that reaches them: O(n + G log G), G the
// window, ~7450 + 6h/dx nodes. The FFT differs from the direct sum by rounding only (ECE within
// 1e-15 relative on the reference data, tests/unit/test_kernel.cpp).
// Where theirs fails (KDEpy raises for h = 0), ours falls back, documented: with fewer than two
// correct rows or zero spread among them, h uses the std of all confidences; h is floored at
// two grid steps (3e-4). With no correct row f_1 = 0, so acc = 0.
// Target: ece_top_l1. The smoothing bias is O(h^2) in the interior plus the reflection's O(h)
// boundary bias where the density of confidences does not vanish at 0 or 1.
#include "estimators/estimator.hpp"

namespace calbench {

class KdeEce final : public Estimator {
 public:
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return Quantity::ece_top_l1; }
  bool vanishes_when_calibrated() const override { return true; }
};

}  // namespace calbench
