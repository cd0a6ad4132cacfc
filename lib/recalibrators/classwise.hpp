#pragma once
// The `classwise` wrapper (Panchenko et al. 2021): one model of the wrapped method per
// predicted class, each fitted on the fit rows whose argmax is that class, and applied to the
// rows predicted as that class. A predicted class whose rows cannot be fitted (none, or a
// degenerate fit: DomainError from the wrapped method) keeps p unchanged; parameters() reports
// how many did. At least one class must be fitted, else fit throws DomainError.
#include <memory>

#include "recalibrators/recalibrator.hpp"

namespace calbench {

class Classwise : public Recalibrator {
 public:
  explicit Classwise(std::shared_ptr<const Recalibrator> inner) : inner_(std::move(inner)) {}
  std::unique_ptr<const CalibrationModel> fit(const Sample& sample) const override;
  std::string name() const override { return "classwise(" + inner_->name() + ")"; }
  // One part per class: the wrapped method's model, or identity for a class it could not fit.
  bool gives(const FittedState& state, std::size_t classes) const override {
    return has_form(state, "classwise", static_cast<long>(classes), [&](const FittedState& part) {
      return part.kind == "identity" || inner_->gives(part, classes);
    });
  }

 private:
  std::shared_ptr<const Recalibrator> inner_;
};

// The fitted model: one model per predicted class, null for a class left unchanged;
// recalibrators/restore_model.hpp.
std::unique_ptr<const CalibrationModel> classwise_model(
    std::vector<std::unique_ptr<const CalibrationModel>> models);

}  // namespace calbench
