#pragma once
// `corp`: the CORP decomposition of a proper score (Dimitriadis, Gneiting & Jordan 2021,
// "Stable reliability diagrams for probabilistic classifiers", PNAS 118(8)): the reliability
// curve is the isotonic (PAV) regression of the outcomes on the scores (estimators/
// isotonic_fit.hpp, exact ties pooled), and with S-bar the mean score of
//   f: the scores as given, c: the PAV-recalibrated scores, r: the climatology (mean outcome),
//   MCB = S-bar(f) - S-bar(c)   (miscalibration, >= 0)
//   DSC = S-bar(r) - S-bar(c)   (discrimination, >= 0)
//   UNC = S-bar(r)              (uncertainty)
// so S-bar(f) = MCB - DSC + UNC exactly (their eq. 5).
//
// Scope top: score s = max p, outcome o = 1{argmax p = y}; scope binary (K = 2): s = p_1,
// o = 1{y = 1}. The scores are the binary ones: Brier (s - o)^2 (half calbench's K = 2 `brier`,
// which sums both classes) and log -o log s - (1 - o) log(1 - s), with s and 1 - s floored at
// DBL_MIN as `nll` does. Both are written o S(s, 1) + (1 - o) S(s, 0), linear in o, so the
// truth engine's samples (c in place of o) give the expected score.
//
// Population value (target: its own): MCB tends to E[S(s, r*(s))] - E[S(r*(s), r*(s))], r* the
// isotonic projection of r(s) = P(o = 1 | s); for a monotone r (every `temperature` map, the
// identity) and the Brier score at scope top that is E(s - r(s))^2 = ece_top_l2^2.
#include "estimators/binned_ece.hpp"
#include "estimators/estimator.hpp"

namespace calbench {

enum class CorpScore { brier, log };
enum class CorpComponent { score, mcb, dsc, unc };

struct CorpSpec {
  CorpScore score = CorpScore::brier;
  CorpComponent component = CorpComponent::mcb;
  Scope scope = Scope::top;  // top or binary
};

struct CorpDecomposition {
  double score = 0.0, mcb = 0.0, dsc = 0.0, unc = 0.0;
};

// The decomposition of one scope's scores and outcomes; `order` as isotonic_fit's.
CorpDecomposition corp_decomposition(std::span<const double> scores,
                                     std::span<const double> outcomes, CorpScore score,
                                     std::span<const std::uint32_t> order = {});

class Corp final : public Estimator, public ConfidenceOrdered {
 public:
  explicit Corp(CorpSpec spec);
  double estimate(const Sample& sample, EstimatorWorkspace& workspace) const override;
  std::optional<Quantity> target() const override { return std::nullopt; }
  bool vanishes_when_calibrated() const override { return spec_.component == CorpComponent::mcb; }
  // At scope top the scores are the confidences, whose order a resample may know.
  Capabilities capabilities() const override {
    return {.confidence_order = spec_.scope == Scope::top ? this : nullptr};
  }
  double estimate_in_order(const Sample& sample, std::span<const std::uint32_t> order,
                           EstimatorWorkspace& workspace) const override;
  std::optional<std::string> classes_problem(std::size_t classes) const override;

 private:
  CorpSpec spec_;
};

}  // namespace calbench
