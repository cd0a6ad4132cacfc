#include "estimators/binned_ece.hpp"

#include "core/error.hpp"

namespace calbench {

BinnedEce::BinnedEce(BinnedEceSpec spec) : spec_(spec) {
  if (spec_.bins < 1) throw DomainError("bins = 0: must be >= 1");
}

double BinnedEce::estimate(const Sample& s, EstimatorWorkspace& ws) const {
  ws.outcomes.resize(s.size);
  for (std::size_t i = 0; i < s.size; ++i) ws.outcomes[i] = s.outcome(i, s.predicted[i]);
  return binned_calibration_error(s.confidence, ws.outcomes, spec_.binning, spec_.bins, spec_.norm,
                                  ws);
}

std::optional<Quantity> BinnedEce::target() const {
  switch (spec_.norm) {
    case Norm::l1:
      return Quantity::ece_top_l1;
    case Norm::l2:
      return Quantity::ece_top_l2;
    default:
      return std::nullopt;
  }
}

}  // namespace calbench
