#include "recalibrators/isotonic.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "estimators/isotonic_fit.hpp"

namespace calbench {
namespace {

class IsotonicMap : public BinaryMap {
 public:
  IsotonicMap(std::vector<double> x, std::vector<double> y) : x_(std::move(x)), y_(std::move(y)) {}

  double operator()(double s) const override {
    if (s <= x_.front()) return y_.front();
    if (s >= x_.back()) return y_.back();
    const auto it = std::upper_bound(x_.begin(), x_.end(), s);  // x_[j-1] <= s < x_[j]
    const std::size_t j = static_cast<std::size_t>(it - x_.begin());
    const double x0 = x_[j - 1], x1 = x_[j], y0 = y_[j - 1], y1 = y_[j];
    if (s == x0) return y0;
    // numpy.interp's formula: slope * (x - x0) + y0.
    return (y1 - y0) / (x1 - x0) * (s - x0) + y0;
  }

  std::vector<FittedValue> parameters() const override {
    std::size_t steps = 1;
    for (std::size_t j = 1; j < y_.size(); ++j)
      if (y_[j] != y_[j - 1]) ++steps;
    return {{"levels", static_cast<double>(steps)}};
  }
  FittedState state() const override {
    return {.kind = "isotonic", .arrays = {{"x", x_}, {"y", y_}}};
  }

 private:
  std::vector<double> x_, y_;  // distinct scores and fitted values
};

}  // namespace

std::unique_ptr<const BinaryMap> isotonic_map(std::vector<double> x, std::vector<double> y) {
  return std::make_unique<IsotonicMap>(std::move(x), std::move(y));
}

std::unique_ptr<const BinaryMap> IsotonicCalibrator::fit(std::span<const double> scores,
                                                         std::span<const double> outcomes,
                                                         const std::string& what) const {
  if (scores.empty()) throw DomainError(what + ": the fit sample is empty");
  // scikit-learn's _make_unique: a score less than 1e-15 (float64 resolution) above the
  // first score of the current group joins the group, which keeps that first score.
  IsotonicFit fitted = isotonic_fit(scores, outcomes, 1e-15);
  return std::make_unique<IsotonicMap>(std::move(fitted.x), std::move(fitted.y));
}

}  // namespace calbench
