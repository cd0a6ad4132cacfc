#pragma once
// The worked example of docs/extending.md (compiled and tested by tests/unit/test_extending.cpp):
// the maximum calibration error (Naeini, Cooper & Hauskrecht 2015; Guo et al. 2017, eq. 3),
// MCE = max over non-empty bins b of |acc_b - conf_b|, on B equal-width bins of the
// confidence max p (bin min(B - 1, floor(B s)), so 1 is in the last bin). A domain type: no
// JSON.
#include <cstddef>
#include <optional>

#include "core/quantity.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

class Mce : public Estimator {
 public:
  explicit Mce(std::size_t bins);  // throws DomainError when bins is 0
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  // Its own population value: no quantity of the truth engine is a maximum over bins.
  std::optional<Quantity> target() const override { return std::nullopt; }

 private:
  std::size_t bins_;
};

}  // namespace calbench
