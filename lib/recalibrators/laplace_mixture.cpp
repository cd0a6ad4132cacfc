#include "recalibrators/laplace_mixture.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace calbench {
namespace {

class LaplaceMixtureModel : public CalibrationModel {
 public:
  LaplaceMixtureModel(std::unique_ptr<const CalibrationModel> inner, double epsilon)
      : inner_(std::move(inner)), epsilon_(epsilon) {}

  void apply(std::span<const double> p, std::size_t classes, std::span<double> q) const override {
    inner_->apply(p, classes, q);
    mix_with_uniform(q, classes, epsilon_);
  }
  std::vector<FittedValue> parameters() const override {
    auto out = inner_->parameters();
    out.push_back({"epsilon", epsilon_});
    return out;
  }
  // An affine map with a non-zero factor keeps injectivity.
  bool injective() const override { return epsilon_ < 1.0 && inner_->injective(); }
  FittedState state() const override {
    return {
        .kind = "laplace_mixture", .scalars = {{"epsilon", epsilon_}}, .parts = {inner_->state()}};
  }

 private:
  std::unique_ptr<const CalibrationModel> inner_;
  double epsilon_;
};

}  // namespace

void mix_with_uniform(std::span<double> q, std::size_t classes, double epsilon) {
  const double floor = epsilon / static_cast<double>(classes), keep = 1.0 - epsilon;
  for (double& v : q) v = keep * v + floor;
}

std::unique_ptr<const CalibrationModel> laplace_mixture_model(
    std::unique_ptr<const CalibrationModel> inner, double epsilon) {
  return std::make_unique<LaplaceMixtureModel>(std::move(inner), epsilon);
}

LaplaceMixture::LaplaceMixture(std::shared_ptr<const Recalibrator> inner, double constant)
    : inner_(std::move(inner)), constant_(constant) {
  if (!(constant_ >= 0.0) || !std::isfinite(constant_))
    throw DomainError("laplace_mixture: constant = " + format_double(constant_) +
                      ": must be >= 0 and finite");
}

std::unique_ptr<const CalibrationModel> LaplaceMixture::fit(const Sample& sample) const {
  check_fit_sample(sample, name(), 1, "");
  const double epsilon = std::min(1.0, constant_ / (static_cast<double>(sample.size) + 1.0));
  return std::make_unique<LaplaceMixtureModel>(inner_->fit(sample), epsilon);
}

}  // namespace calbench
