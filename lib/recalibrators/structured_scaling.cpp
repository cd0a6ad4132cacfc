#include "recalibrators/structured_scaling.hpp"

#include <cmath>

#include "core/error.hpp"
#include "recalibrators/laplace_mixture.hpp"
#include "recalibrators/temperature_scaling.hpp"

namespace calbench {
namespace {

class StructuredScalingModel : public CalibrationModel {
 public:
  StructuredScalingModel(std::unique_ptr<const CalibrationModel> first,
                         std::unique_ptr<const CalibrationModel> second)
      : first_(std::move(first)), second_(std::move(second)) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    std::vector<double> middle(p.size());
    first_->apply(p, classes, middle);
    second_->apply(middle, classes, q);
  }
  std::vector<FittedValue> parameters() const override {
    auto out = first_->parameters();
    for (auto& v : second_->parameters()) out.push_back(std::move(v));
    return out;
  }
  bool injective() const override { return first_->injective() && second_->injective(); }
  FittedState state() const override {
    return {.kind = "structured_scaling", .parts = {first_->state(), second_->state()}};
  }

 private:
  std::unique_ptr<const CalibrationModel> first_, second_;
};

LogitScalingSpec spec_of(LogitScalingForm form, StructuredPenalty penalty) {
  for (double x : {penalty.intercept, penalty.diagonal, penalty.off_diagonal})
    if (!(x >= 0.0) || !std::isfinite(x))
      throw DomainError("structured scaling: a penalty strength must be >= 0 and finite");
  LogitScalingSpec spec;
  spec.form = form;
  spec.structured = penalty;
  return spec;
}

}  // namespace

std::unique_ptr<const CalibrationModel> structured_scaling_model(
    std::unique_ptr<const CalibrationModel> first, std::unique_ptr<const CalibrationModel> second) {
  return std::make_unique<StructuredScalingModel>(std::move(first), std::move(second));
}

StructuredScaling::StructuredScaling(std::string name, LogitScalingForm form,
                                     StructuredPenalty penalty)
    : scaling_(std::move(name), spec_of(form, penalty)) {}

std::unique_ptr<const CalibrationModel> StructuredScaling::fit(const Sample& sample) const {
  check_fit_sample(sample, name(), 1, "");
  const double epsilon = 1.0 / (static_cast<double>(sample.size) + 1.0);
  auto first = laplace_mixture_model(TemperatureScaling().fit(sample), epsilon);
  std::vector<double> q0(sample.p.size());
  first->apply(sample.p, sample.classes, q0);
  const Sample scaled = make_sample(sample.classes, std::move(q0), sample.label);
  auto second = std::make_unique<LogitScalingModel>(scaling_.fit_parameters(scaled));
  return std::make_unique<StructuredScalingModel>(std::move(first), std::move(second));
}

}  // namespace calbench
