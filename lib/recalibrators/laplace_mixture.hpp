#pragma once
// The Laplace-mixture wrapper (probmetrics' MixtureCalibrator, the "-mix" methods of CalArena):
// the wrapped method's output q is mixed with the uniform vector,
//   q' = (1 - eps) q + eps / K,   eps = constant / (n + 1),
// n the fit sample's rows, so that no confidence is 0 (the log loss stays finite) and the
// mixture fades as the fit sample grows; constant = 1 is probmetrics' default
// (cal_mixture_output_constant). Fitting is the wrapped method's: the mixture is applied
// after it (probmetrics' input mixture, input_constant, is 0 by default and not offered).
#include <memory>

#include "recalibrators/recalibrator.hpp"

namespace calbench {

class LaplaceMixture : public Recalibrator {
 public:
  // Checks constant >= 0 and finite.
  LaplaceMixture(std::shared_ptr<const Recalibrator> inner, double constant);
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return "laplace_mixture(" + inner_->name() + ")"; }
  bool gives(const FittedState& state, std::size_t classes) const override {
    return has_form(state, "laplace_mixture", 1,
                    [&](const FittedState& part) { return inner_->gives(part, classes); });
  }

 private:
  std::shared_ptr<const Recalibrator> inner_;
  double constant_;
};

// The fitted model around its inner model, eps in [0, 1]; recalibrators/restore_model.hpp.
std::unique_ptr<const CalibrationModel> laplace_mixture_model(
    std::unique_ptr<const CalibrationModel> inner, double epsilon);

// In place: q = (1 - eps) q + eps/K for each row.
void mix_with_uniform(std::span<double> q, std::size_t classes, double epsilon);

}  // namespace calbench
