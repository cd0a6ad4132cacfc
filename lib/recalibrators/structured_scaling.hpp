#pragma once
// Structured vector and matrix scaling, SVS and SMS (CalArena; probmetrics' SVSCalibrator and
// SMSCalibrator with their defaults: ridge penalty, BFGS). Two steps on one fit sample:
//   1. temperature scaling mixed with the uniform vector, probmetrics' "ts-mix":
//      q0 = (1 - eps) softmax(log p / T) + eps/K, eps = 1/(n + 1) (recalibrators/laplace_mixture);
//   2. vector (SVS: softmax(a ⊙ log q0 + b)) or matrix (SMS: softmax(W log q0 + b)) scaling of
//      q0 by mean NLL plus the structured ridge penalty of recalibrators/logit_scaling.hpp,
//      which pulls W towards I and b towards 0 with strength λ K/n (off the diagonal
//      λ K(K-1)/n), from the identity.
// With infinite penalties the second step is the identity and SVS = SMS = ts-mix.
#include <memory>

#include "recalibrators/logit_scaling.hpp"
#include "recalibrators/recalibrator.hpp"

namespace calbench {

class StructuredScaling : public Recalibrator {
 public:
  // `name` is the registry name ("svs", "sms"); `form` vector for SVS, matrix for SMS.
  StructuredScaling(std::string name, LogitScalingForm form, StructuredPenalty penalty);
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return scaling_.name(); }
  bool gives(const FittedState& state, std::size_t) const override {
    return has_kind(state, "structured_scaling");
  }

 private:
  LogitScaling scaling_;
};

// The fitted model: `first` (ts-mix) then `second` (the affine map of the logits);
// recalibrators/restore_model.hpp.
std::unique_ptr<const CalibrationModel> structured_scaling_model(
    std::unique_ptr<const CalibrationModel> first, std::unique_ptr<const CalibrationModel> second);

}  // namespace calbench
