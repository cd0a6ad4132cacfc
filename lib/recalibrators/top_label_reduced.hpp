#pragma once
// The `top_label_reduced` wrapper (Panchenko et al. 2021; Guo et al. 2017's reduction): the
// wrapped method is fitted on the induced binary problem of the top label — rows
// (1 - max p, max p) with label 1 when argmax p = y — and a vector p maps to q with
// q_top = the binary model's probability of label 1 at (1 - max p, max p) and the other
// components scaled by (1 - q_top)/(1 - max p) (rescale_to_top). Degenerate when every top
// label in the fit sample is correct, or every one wrong.
#include <memory>

#include "recalibrators/recalibrator.hpp"

namespace calbench {

class TopLabelReduced : public Recalibrator {
 public:
  explicit TopLabelReduced(std::shared_ptr<const Recalibrator> inner) : inner_(std::move(inner)) {}
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return "top_label_reduced(" + inner_->name() + ")"; }
  // Around the wrapped method's model of the top label's binary problem (K = 2).
  bool gives(const FittedState& state, std::size_t) const override {
    return has_form(state, "top_label_reduced", 1,
                    [&](const FittedState& part) { return inner_->gives(part, 2); });
  }

 private:
  std::shared_ptr<const Recalibrator> inner_;
};

// The fitted model around its binary (K = 2) model; recalibrators/restore_model.hpp.
std::unique_ptr<const CalibrationModel> top_label_reduced_model(
    std::unique_ptr<const CalibrationModel> binary);

}  // namespace calbench
