#pragma once
// `skce`: the squared kernel calibration error of Widmann, Lindsten & Zachariah 2019
// ("Calibration tests in multi-class classification: a unifying framework"), with the
// matrix-valued kernel k(p, p') I_K:
//   SKCE = E h((p, y), (p', y')) over independent pairs, where
//   h((p, y), (p', y')) = (e_y - p)^T k(p, p') I_K (e_y' - p')
//                       = k(p, p') * (1{y = y'} - p'_y - p_{y'} + <p, p'>).
// Kernels on the simplex (Euclidean distance, bandwidth l > 0):
//   gaussian:  k(p, p') = exp(-||p - p'||^2 / (2 l^2))  (KernelFunctions' SqExponentialKernel
//              with lengthscale l, the kernel of CalibrationErrors.jl's examples);
//   laplacian: k(p, p') = exp(-||p - p'|| / l)          (ExponentialKernel, as in the paper).
// CalibrationErrors.jl has no default kernel; ours is gaussian with l = 1.
// Estimators (both unbiased; the value can be negative):
//   linear (default, Widmann et al. eq. for SKCE_ul): (1/floor(n/2)) sum_{i<floor(n/2)}
//     h(X_{2i}, X_{2i+1}) — O(nK), consistent because the rows are i.i.d.;
//   quadratic (U-statistic, SKCE_uq): 2/(n(n-1)) sum_{i<j} h(X_i, X_j) — O(n^2 K), only when
//     asked; its population_estimator() is the linear form with the same kernel.
// n < 2 gives 0. Target: its own population value (the SKCE of the model, a squared quantity).
// On population samples, which keep the true c (truth/population.hpp), h is replaced by its
// conditional mean given c and c', k(p, p') (c - p).(c' - p'): the same population value with
// less noise, exactly 0 for a calibrated generator.
#include "estimators/estimator.hpp"

namespace calbench {

enum class SkceKernel { gaussian, laplacian };
enum class SkceForm { linear, quadratic };

struct SkceSpec {
  SkceKernel kernel = SkceKernel::gaussian;
  double bandwidth = 1.0;
  SkceForm form = SkceForm::linear;
};

class Skce final : public Estimator {
 public:
  explicit Skce(SkceSpec spec);  // bandwidth > 0 and finite
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return std::nullopt; }
  bool vanishes_when_calibrated() const override { return true; }
  std::shared_ptr<const Estimator> population_estimator() const override;
  const SkceSpec& spec() const { return spec_; }
  // h((p_i, y_i), (p_j, y_j)) of the header comment.
  double h(const Sample& sample, std::size_t i, std::size_t j) const;

 private:
  SkceSpec spec_;
};

}  // namespace calbench
