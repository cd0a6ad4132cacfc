#pragma once
// Bayesian binning into quantiles (Naeini, Cooper & Hauskrecht 2015) as a binary calibrator,
// used on the top label (registry `bbq`). Each model M_B bins the scores into B equal-mass
// bins (recalibrators/score_bins.hpp) with a Beta(α_b, β_b) prior per bin, α_b = (N'/B) e_b,
// β_b = (N'/B)(1 - e_b), e_b the midpoint of the bin's interval and N' the prior strength.
// Its marginal likelihood is
//   Score(M_B) = Π_b Γ(N'/B)/Γ(n_b + N'/B) · Γ(m_b + α_b)/Γ(α_b) · Γ(n_b - m_b + β_b)/Γ(β_b),
// n_b the rows in bin b and m_b the positives among them. The models are B = ceil(N^(1/3)/C)
// .. floor(C N^(1/3)) with C = 10 (capped at N), equally likely a priori; a score maps to the
// posterior-weighted mean of the bins' posterior means (m_b + α_b)/(n_b + N'/B).
#include "recalibrators/binary_calibrator.hpp"

namespace calbench {

// The prior strength N' when none is given: the class's default and the registry's
// `prior_strength` (docs/recalibration.md).
inline constexpr double bbq_default_prior_strength = 2.0;

class BbqCalibrator : public BinaryCalibrator {
 public:
  // Throws DomainError unless prior_strength > 0.
  explicit BbqCalibrator(double prior_strength = bbq_default_prior_strength);
  std::unique_ptr<const BinaryMap> fit(std::span<const double> scores,
                                       std::span<const double> outcomes,
                                       const std::string& what) const override;
  std::string name() const override { return "bbq"; }
  std::string map_kind() const override { return "bbq"; }

 private:
  double prior_strength_;
};

// The fitted map, rebuilt from its binning models (edges, values and posterior weight of each;
// recalibrators/restore_model.hpp).
std::unique_ptr<const BinaryMap> bbq_map(std::vector<std::vector<double>> edges,
                                         std::vector<std::vector<double>> values,
                                         std::vector<double> weights);

}  // namespace calbench
